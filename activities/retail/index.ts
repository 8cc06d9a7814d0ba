/** The retail component's surface: what the edge, the workflows and other components may use. */
/** The catalogue and venue operations, by module (the edge's retail routes use most of them). */
export { getBrand, organizationProducts, searchableCatalogue, venueProducts } from './catalogue.ts';
export * as catalogue from './catalogue.ts';
export { listUnknownItems, noteUnmatchedReceiptLines } from './unknown-items.ts';
export { retailUserData } from './user-data.ts';
export { getVenue, nearbyVenues, organizationVenues } from './venues.ts';
export * as venues from './venues.ts';
