import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { DEPLOYMENT_HEADER } from '../../../../core/edge-headers.ts';
import { EDGE_PAGES, sendPage } from '../pages.ts';
import type { ByteCounter } from '../static.ts';
import { responseFields, responseObject } from './fields.ts';
import type { AnswerShaper } from './types.ts';

/**
 * One request on its way to an app and back: the handler undici calls. A class rather than
 * closures, so a request allocates one object for it.
 */
export class Forwarding implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | null = null;
  /** Whether a chunk of the body was written (with it, the head). */
  wrote = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly deploymentId: string,
    readonly counter: ByteCounter,
    readonly shape: AnswerShaper | undefined,
  ) {
    // The client left: stop the app's work on its behalf.
    res.once('close', () => {
      if (!res.writableFinished) this.controller?.abort(new Error('the client closed the connection'));
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    const { res } = this;
    // 1xx answers (103 Early Hints) are not passed on; the final answer follows.
    if (statusCode < 200 || res.destroyed) return;
    if (this.shape) {
      const fields = responseObject(headers);
      const shaped = this.shape(statusCode, fields);
      fields[DEPLOYMENT_HEADER] = this.deploymentId;
      // A changed status gets its own reason phrase, not the app's.
      if (shaped === statusCode) res.writeHead(statusCode, statusMessage || undefined, fields);
      else res.writeHead(shaped, fields);
    } else {
      res.writeHead(statusCode, statusMessage || undefined, responseFields(this.deploymentId, headers));
    }
    // Backpressure: the app's answer waits while the client's connection is full.
    res.on('drain', () => controller.resume());
    // Node sends the head with the first body write; an app that sent its head ahead of its body
    // (a page streamed as it renders) would have it held here until then. Once what came with
    // the head is written, it goes out if no body did.
    process.nextTick(flushHead, this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.wrote = true;
    this.counter.bytes += chunk.length;
    if (!this.res.write(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, _err: Error): void {
    const { req, res } = this;
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    res.setHeader(DEPLOYMENT_HEADER, this.deploymentId);
    this.counter.bytes += sendPage(req, res, EDGE_PAGES.notResponding());
  }
}

/** Sends a forwarded answer's head now when no body went with it (see onResponseStart). */
function flushHead(f: Forwarding): void {
  const { res } = f;
  if (!f.wrote && !res.writableEnded && !res.destroyed) res.flushHeaders();
}
