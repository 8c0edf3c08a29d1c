// The page's routes: "/" (connect, upload, start, the task list) and "/task/<id>" (one task with its step timeline
// and raw JSON-RPC log), on the History API. The Worker answers every other path with the page as well (assets:
// single-page-application), so a reload or a shared link lands on the same route.
import { useEffect, useState } from "react";

export type Route = { page: "home" } | { page: "task"; taskId: string };
/** Goes to a path of the page (pushState, no reload). */
export type Go = (path: string) => void;

export const HOME_PATH = "/";

export function taskPath(taskId: string): string {
  return `/task/${encodeURIComponent(taskId)}`;
}

/** The route of a path; anything that is not a task's path shows the home page. */
export function routeOf(path: string): Route {
  const match = /^\/task\/([^/]+)\/?$/.exec(path);
  return match ? { page: "task", taskId: decodeURIComponent(match[1] ?? "") } : { page: "home" };
}

/** The current path, and a function that goes to another one (and to the top of the page). */
export function usePath(): [string, Go] {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);
  const go = (next: string) => {
    history.pushState(null, "", next);
    setPath(next);
    scrollTo(0, 0);
  };
  return [path, go];
}
