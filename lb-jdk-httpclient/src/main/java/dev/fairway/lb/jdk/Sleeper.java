package dev.fairway.lb.jdk;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * How a call waits between rounds of attempts: {@code send} blocks its own thread (an interrupt
 * ends the wait), {@code sendAsync} schedules the next attempt instead of blocking a thread. A seam
 * for tests, which record the waits and run at once.
 */
interface Sleeper {
  Sleeper SYSTEM = new Sleeper() {
    @Override
    public void sleep(long millis) throws InterruptedException {
      if (millis > 0) {
        Thread.sleep(millis);
      }
    }

    @Override
    public Executor after(long millis, Executor executor) {
      return millis > 0 ? CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS, executor) : executor;
    }
  };

  /** Blocks for {@code millis} (0 or less: not at all). */
  void sleep(long millis) throws InterruptedException;

  /** An executor that runs its tasks on {@code executor} {@code millis} from now. */
  Executor after(long millis, Executor executor);
}
