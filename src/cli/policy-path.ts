/** Where the policy is read from when neither --config nor ROTATOR_CONFIG says: its own module, so that the help text needs nothing else. */
export const DEFAULT_POLICY_PATH = 'config/rotation.yaml';
