/**
 * What the worker's workflow code is made of, shared by the worker (which bundles it at start when
 * run from the sources) and the build (which bundles it once into dist/). Paths are relative to
 * this directory.
 */
export const WORKFLOW_SOURCES = {
  workflowsPath: '../workflows/index.ts',
  interceptorModules: ['./workflow-interceptors.ts'],
};

/** The prebuilt bundle, relative to dist/. */
export const WORKFLOW_BUNDLE = 'workflow-bundle.js';
