// The processes behind a `wrangler dev` server, read from /proc: a process group's live members, their resident
// memory by role, the Durable Objects' SQLite databases they hold open, and stopping the whole group. Linux only (as
// are the suites that call it); `wrangler.ts` uses it to stop and restart servers, suites to read memory and
// residency.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { connect } from "node:net";
import { resolve } from "node:path";
import { sleep } from "./mcp.ts";

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
    socket.setTimeout(2000, () => {
      socket.destroy();
      done(false);
    });
  });
}

/** The live (non-zombie) members of a process group, with their command names. */
export function groupMembers(pgid: number): Array<{ pid: number; comm: string }> {
  const members: Array<{ pid: number; comm: string }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so parse around the last ')'.
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) {
      members.push({ pid: Number(entry), comm: stat.slice(stat.indexOf("(") + 1, close) });
    }
  }
  return members;
}

/** Resident memory (VmRSS, KiB) of the `workerd` processes in process group `pgid`, summed (0 when none). */
export function workerdRssKiB(pgid: number): number {
  let total = 0;
  for (const { pid } of groupMembers(pgid).filter(({ comm }) => comm === "workerd")) {
    try {
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (match) total += Number(match[1]);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/**
 * Resident memory (VmRSS, KiB) of the `workerd` processes in group `pgid`, split by role. wrangler dev runs two: the
 * runtime, which runs the Worker and its Durable Objects and so holds files under the persist dir (`stateDir`) open,
 * and wrangler's proxy (its ProxyWorker on the public port and the InspectorProxyWorker, which receives every
 * console.log line of the Worker over the inspector and forwards it to wrangler). `workerdRssKiB` is their sum.
 * Their open file descriptors too (sockets among them).
 */
export function workerdRssByRole(
  pgid: number,
  stateDir: string,
): { runtimeKiB: number; proxyKiB: number; runtimeFds: number; proxyFds: number } {
  const split = { runtimeKiB: 0, proxyKiB: 0, runtimeFds: 0, proxyFds: 0 };
  const prefix = `${resolve(stateDir)}/`;
  for (const { pid } of groupMembers(pgid).filter(({ comm }) => comm === "workerd")) {
    let status: string;
    let fds: string[];
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // exited meanwhile
    }
    const runtime = fds.some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(prefix);
      } catch {
        return false; // closed meanwhile
      }
    });
    const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0);
    if (runtime) {
      split.runtimeKiB += kib;
      split.runtimeFds += fds.length;
    } else {
      split.proxyKiB += kib;
      split.proxyFds += fds.length;
    }
  }
  return split;
}

/**
 * Durable Objects of class `className` resident in the `workerd` processes of group `pgid`: the SQLite databases
 * of that class it holds open (workerd closes an object's database when it evicts the object).
 */
export function residentObjects(pgid: number, className: string): number {
  const database = new RegExp(`-${className}/[0-9a-f]{64}\\.sqlite$`);
  const open = new Set<string>();
  for (const { pid } of groupMembers(pgid).filter(({ comm }) => comm === "workerd")) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (database.test(target)) open.add(target);
      } catch {
        // closed meanwhile
      }
    }
  }
  return open.size;
}

/** Sends `signal` to every process of the group; a group already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone
  }
}

/** Signals a whole process group and waits until none of its processes is alive (SIGKILL after `graceMs`). */
export async function killGroup(pgid: number, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  signalGroup(pgid, signal);
  const deadline = Date.now() + graceMs;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() > deadline) {
      if (signal === "SIGKILL") throw new Error(`process group ${pgid} survived SIGKILL`);
      return killGroup(pgid, "SIGKILL", graceMs);
    }
    await sleep(25);
  }
}
