/**
 * One client asking LOOP_URL (with LOOP_AUTH as bearer token, when set) in a loop, one request
 * at a time, in its own process so it does not take the load generator's event loop. Prints
 * the number of answers on SIGTERM, then exits.
 */
const url = process.env.LOOP_URL!;
const headers: Record<string, string> = process.env.LOOP_AUTH
  ? { authorization: `Bearer ${process.env.LOOP_AUTH}` }
  : {};
let made = 0;
let stop = false;
process.on('SIGTERM', () => (stop = true));
process.stdout.write('ready\n');
while (!stop) {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  made++;
}
process.stdout.write(`${made}\n`);
