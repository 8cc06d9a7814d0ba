#!/usr/bin/env bash
# Runs a child process and ends it when the parent that asked for it goes away, even if that
# parent was killed with SIGKILL: the platform never leaves orphan servers behind.
# usage: guard.sh <parent-pid> <command> [args...]
parent=$1; shift
"$@" &
child=$!
stop() { kill -TERM "$child" 2>/dev/null; wait "$child"; exit $?; }
trap stop TERM INT HUP
while kill -0 "$parent" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 0.5; done
if kill -0 "$child" 2>/dev/null; then stop; fi
wait "$child"
