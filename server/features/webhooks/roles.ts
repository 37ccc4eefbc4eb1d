/**
 * The webhooks feature's second public entry: what the process roles start: the delivery worker.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { startDeliveryWorker } from './delivery-worker.ts';
