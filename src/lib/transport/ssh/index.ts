// The SSH transport's public face. Only the files of this folder import ssh2; each does one job:
//   connect.ts   connect, check the pinned host key, log in; the Transport
//   exec.ts      commands over the connection (timeout, cancel)
//   sftp.ts      files over SFTP, written atomically
//   host-key.ts  fingerprints, and seeing a server's host key without logging in
//   keys.ts      parsing keys with ssh2's parser
//   keygen.ts    new ed25519 key pairs
//   failures.ts  how connection failures read
//   tunnel.ts    local port forwards (citc monitor's way to a cloud management node's Prometheus)
export {connectSsh, type SshConnectOptions} from './connect.js'
export {fetchHostKeyFingerprint, fetchPinnedHostKey, sshFingerprint} from './host-key.js'
export {generateEd25519KeyPair, type GeneratedKeyPair} from './keygen.js'
export {parseSshPublicKey, publicKeyFingerprint, type ParsedPublicKey} from './keys.js'
export type {LocalForward} from './tunnel.js'
export type {SshTransport} from './types.js'
