// The form of an SSH host key's fingerprint, shared by the places that check one without talking SSH
// (limits.yaml's static:, cluster.yaml) and the SSH transport (which computes them): one rule.

/** `SHA256:` and 43 base64 characters, as `ssh-keygen -l` prints it. */
export const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/
