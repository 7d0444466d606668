/** See policy-docs.mjs: the policy reference's field tables, from the policy's JSON Schema. */
export declare const REGION_START: string;
export declare const REGION_END: string;
export declare function policyFieldTables(schema: Record<string, unknown>): string;
export declare function withGeneratedRegion(page: string, generated: string): string;
