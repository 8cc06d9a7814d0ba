#!/usr/bin/env bash
# Runs a command that ends when the parent that asked for it goes away, even if that parent was
# killed with SIGKILL: the platform never leaves orphan servers behind.
# The command replaces this shell (exec), so the parent's child pid is the command's own pid: a
# supervisor sees the command's exit (signal included) and its logs name the real process.
# A watcher in the background sends SIGTERM when the parent is gone (SIGKILL 15 s later if the
# command is still there) and ends on its own when the command does.
# usage: guard.sh <parent-pid> <command> [args...]
parent=$1; shift
self=$$
(
  while kill -0 "$parent" 2>/dev/null && kill -0 "$self" 2>/dev/null; do sleep 0.5; done
  kill -0 "$self" 2>/dev/null || exit 0
  kill -TERM "$self" 2>/dev/null
  for _ in $(seq 30); do kill -0 "$self" 2>/dev/null || exit 0; sleep 0.5; done
  kill -KILL "$self" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
exec "$@"
