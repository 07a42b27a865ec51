package dev.fairway.lb.dns;

import java.util.concurrent.Executor;
import java.util.concurrent.Future;

/**
 * Where a source's steps run, one at a time: {@link #execute} hops without waiting, {@link #schedule}
 * waits first. The source's own thread in production; a manual clock in tests.
 */
interface Scheduler extends Executor {
  /** Runs {@code task} after {@code delayNanos}; cancelling the result drops it. */
  Future<?> schedule(Runnable task, long delayNanos);
}
