// The per-task actions this operator API answers, listed by GET /operator so a client (the console,
// durable-mcp-server/console) offers exactly these and needs no change when one is added. Each names a route:
// "cancel" is POST /tasks/:id/cancel (and POST /cancellations for many); an action added here comes with its route.
export const OPERATOR_ACTIONS: readonly string[] = ["cancel"];
