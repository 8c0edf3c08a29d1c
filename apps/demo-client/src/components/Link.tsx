// A link within the page: a plain click goes there without a reload; a modified click (new tab, ...) is the browser's.
import type { MouseEvent, ReactNode } from "react";
import type { Go } from "../routes.ts";

export function Link({ to, go, children }: { to: string; go: Go; children: ReactNode }) {
  const click = (event: MouseEvent) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(to);
  };
  return (
    <a href={to} onClick={click}>
      {children}
    </a>
  );
}
