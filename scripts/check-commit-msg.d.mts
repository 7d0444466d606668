// The types of check-commit-msg.mjs, for the tests that import it (tsconfig does not check JS).
export declare const SUBJECT_LIMIT: number;
export declare function commitMessageProblems(text: string): string[];
