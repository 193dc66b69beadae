export {};
//# sourceMappingURL=proxy-context.js.map