// The door of the TaskLimiter Durable Object's folder: the RPC contract and the class factory.
export {
  limiterOf,
  type LimiterRpc,
  type LimiterStatus,
  type LimiterWakeRpc,
  type RateAnswer,
  type SlotAnswer,
  type SlotRequest,
  type StartAnswer,
  type TaskLimiterClass,
} from "./limiter-rpc.js";
export { defineTaskLimiter } from "./task-limiter.js";
