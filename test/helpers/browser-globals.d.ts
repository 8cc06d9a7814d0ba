/**
 * What page.evaluate callbacks in the browser tests name: they run in the page, where the DOM
 * defines these. Declared loosely here rather than with `lib: dom`, whose types would clash with
 * Node's (Buffer as a fetch body, FormData) across the whole project.
 */
declare const document: any;
declare const sessionStorage: any;
declare const localStorage: any;
declare const location: any;
declare const innerWidth: number;
declare const innerHeight: number;
type Document = any;
type HTMLElement = any;
type HTMLImageElement = any;
type HTMLInputElement = any;
type HTMLCanvasElement = any;
