// The clock of a live view: a running task's duration counts up on its card, its waterfall grows.
import { useEffect, useState } from "react";

/** Re-renders every `ms` while `live`: a running task's duration counts up. */
export function useNow(live: boolean, ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [live, ms]);
  return now;
}
