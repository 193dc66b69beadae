/**
 * The fake provider's public types, kept apart from the implementation so the internal modules can
 * share them without importing each other in a circle.
 */
export {};
//# sourceMappingURL=types.js.map