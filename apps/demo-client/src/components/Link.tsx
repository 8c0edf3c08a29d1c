// A link within the page: a plain click goes there without a reload; a modified click (new tab, ...) is the browser's.
import type { MouseEvent, ReactNode } from "react";
import type { Go } from "../routes.ts";

export function Link({ to, go, children, className }: { to: string; go: Go; children: ReactNode; className?: string }) {
  const click = (event: MouseEvent) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(to);
  };
  return (
    <a href={to} onClick={click} className={className}>
      {children}
    </a>
  );
}
