/**
 * A capability a component needs from another one, handed in by the composition root
 * (workers/root.ts) instead of imported. Using it before it was handed in is the process's wiring
 * fault, reported as such.
 */
export interface HandedIn<T> {
  set(value: T): void;
  get(): T;
}

/** `what` names the capability in the error, e.g. "search's sources". */
export function handedIn<T>(what: string): HandedIn<T> {
  let value: T | undefined;
  return {
    set: (v) => {
      value = v;
    },
    get: () => {
      if (value === undefined)
        throw new Error(`${what}: not handed in, the process did not call wirePlatform() (workers/root.ts)`);
      return value;
    },
  };
}
