import type { ChildNotice } from "../steps/engine-host.js";

// The shapes child tasks exchange over RPC (task-runner-rpc.ts): a child's notice, a parent's cancel, a listed child.
// Apart from the modules that use them (child-outbox.ts, child-tasks.ts), so that the RPC contract imports no code.

/** A child's notice to its parent (the parent's `childFinished`). */
export interface NoticeBody extends ChildNotice {
  parentId: string;
  /** The label of the parent's invoke step. */
  step: string;
}

/** A parent's cancel of a child: the child's task id and principal (the parent's). */
export interface CancelBody {
  taskId: string;
  principal: string;
}

/** A child as its parent lists it (the operator's `children` route). */
export interface ChildEntry {
  taskId: string;
  step: string;
  task: string;
  onParentCancel: "cancel" | "abandon";
  /** `working` until the child told its final state. */
  status: "working" | "completed" | "failed" | "cancelled";
  startedAt: string;
  finishedAt: string | null;
}
