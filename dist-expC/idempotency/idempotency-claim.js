export {};
//# sourceMappingURL=idempotency-claim.js.map