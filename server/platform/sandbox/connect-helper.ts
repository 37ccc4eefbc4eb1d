/**
 * The source of the connection helper of a server app, run as `node -e` by the sandbox's shell
 * once the app listens (see spawn.ts), inside the app's network namespace but outside bwrap, as
 * the sandbox's user, like pasta. On each `{ connect: id }` from the edge it opens a connection to
 * the app's port on the namespace's 127.0.0.1 and hands the socket to the edge over the IPC
 * channel (fd 5): the edge then talks to the app directly, and pasta no longer copies every byte
 * of every request between two sockets (a process more on each request's way, on the same cores).
 * It reads nothing from those sockets (paused before they connect) and ends with its channel,
 * or with the sandbox (pasta's PID namespace ends with its first process).
 *
 * Plain JavaScript in a string: it runs without the service's loader, and a file would have to
 * be readable by the sandbox's user.
 */
export const CONNECT_HELPER = `
const { connect } = require('node:net');
const port = Number(process.env.SLIPWAY_READY_PORT);
process.on('message', (msg) => {
  if (!msg || typeof msg.connect !== 'number') return;
  const id = msg.connect;
  const socket = connect({ port, host: '127.0.0.1' });
  socket.pause();
  socket.once('connect', () => process.send({ connected: id }, socket, (err) => err && socket.destroy()));
  socket.once('error', () => process.send({ failed: id }));
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
`;
