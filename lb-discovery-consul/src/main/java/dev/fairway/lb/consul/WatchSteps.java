package dev.fairway.lb.consul;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The step machinery a watch loop runs on ({@link HealthWatch}, {@link CoordinateWatch}): at most one
 * request in flight and one step waiting, every step run under a guard that hands whatever it throws to
 * the owner, and a {@link #close()} that drops both. No thread of its own: steps run on the
 * {@link HealthWatch.Scheduler}.
 *
 * <p>Thread-safety: steps run one at a time on the scheduler; {@link #close()} may be called from any
 * thread.
 */
final class WatchSteps {
  /** What the owner does with a failed request: a metric reason and a one-line detail. */
  interface Failure {
    void fail(String reason, String detail);
  }

  private final ConsulHttp http;
  private final HealthWatch.Scheduler scheduler;
  private final Consumer<Throwable> unexpected;

  private volatile boolean closed;
  private volatile @Nullable Future<?> pending;
  private volatile @Nullable CompletableFuture<ConsulHttp.Reply> inFlight;

  /** {@code unexpected} hears anything a step throws; it must not throw itself. */
  WatchSteps(ConsulHttp http, HealthWatch.Scheduler scheduler, Consumer<Throwable> unexpected) {
    this.http = http;
    this.scheduler = scheduler;
    this.unexpected = unexpected;
  }

  /** Runs {@code step} on the scheduler now. */
  void execute(Runnable step) {
    scheduler.execute(() -> guarded(step));
  }

  /** Runs {@code step} on the scheduler after {@code delayNanos}; it replaces the waiting step. */
  void schedule(Runnable step, long delayNanos) {
    pending = scheduler.schedule(() -> guarded(step), delayNanos);
  }

  /**
   * Sends {@code GET pathAndQuery}; its reply goes to {@code onReply}, a transport failure to
   * {@code onFailure} with the reason of Fairway's one failure classification, both as guarded steps.
   */
  void send(String pathAndQuery, Duration timeout, Consumer<ConsulHttp.Reply> onReply, Failure onFailure) {
    CompletableFuture<ConsulHttp.Reply> call = http.get(pathAndQuery, timeout);
    inFlight = call;
    if (closed) {
      call.cancel(true);
      return;
    }
    // The callback is guarded (it logs whatever it throws): the stage it returns has nothing to add.
    CompletableFuture<?> unused = call.whenCompleteAsync((reply, failure) -> guarded(() -> {
      if (call != inFlight) {
        return; // superseded after an unexpected error
      }
      inFlight = null;
      if (failure != null) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause() : failure;
        onFailure.fail(HealthWatch.reason(cause), HealthWatch.describe(cause));
      } else {
        onReply.accept(reply);
      }
    }), scheduler);
  }

  /** Drops the waiting step and cancels the request in flight, without closing. */
  void cancel() {
    Future<?> p = pending;
    if (p != null) {
      p.cancel(false);
    }
    CompletableFuture<ConsulHttp.Reply> f = inFlight;
    inFlight = null;
    if (f != null) {
      f.cancel(true);
    }
  }

  /** Stops for good: no step runs after this. Idempotent, any thread. */
  void close() {
    closed = true;
    cancel();
  }

  private void guarded(Runnable step) {
    if (closed) {
      return;
    }
    try {
      step.run();
    } catch (Throwable t) {
      unexpected.accept(t);
      if (t instanceof VirtualMachineError fatal) {
        throw fatal;
      }
    }
  }
}
