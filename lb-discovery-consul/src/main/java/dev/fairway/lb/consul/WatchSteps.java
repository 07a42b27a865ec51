package dev.fairway.lb.consul;

import dev.fairway.lb.internal.Failures;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The step machinery a watch loop runs on ({@link HealthWatch}, {@link CoordinateWatch}): at most one
 * request in flight and one step waiting, every step run under a guard that hands whatever it throws to
 * the owner, and a {@link #close()} that drops both. No thread of its own: steps run on the
 * {@link Scheduler}. Also the small pure readings both watches share: a reply's index, a failure's
 * metric reason and its one-line description.
 *
 * <p>Thread-safety: steps run one at a time on the scheduler; {@link #close()} may be called from any
 * thread.
 */
final class WatchSteps {
  /** Where steps run. {@link #execute} hops without waiting; {@link #schedule} waits first. */
  interface Scheduler extends Executor {
    /** Runs {@code task} after {@code delayNanos}; cancelling the result drops it. */
    Future<?> schedule(Runnable task, long delayNanos);
  }

  /** What the owner does with a failed request: a metric reason and a one-line detail. */
  interface Failure {
    void fail(String reason, String detail);
  }

  private final ConsulHttp http;
  private final Scheduler scheduler;
  private final Consumer<Throwable> unexpected;

  private volatile boolean closed;
  private volatile @Nullable Future<?> pending;
  private volatile @Nullable CompletableFuture<ConsulHttp.Reply> inFlight;

  /** {@code unexpected} hears anything a step throws; it must not throw itself. */
  WatchSteps(ConsulHttp http, Scheduler scheduler, Consumer<Throwable> unexpected) {
    this.http = http;
    this.scheduler = scheduler;
    this.unexpected = unexpected;
  }

  /**
   * The reply's {@code X-Consul-Index}, the index the next blocking query waits on; or 0 after
   * reporting to {@code onBad} why there is none: {@code bad_index} when it is not a number,
   * {@code missing_index} when it is absent or 0 (blocking on 0 would be a hot loop, so Consul's
   * rule is never to). Both watches read it here, so they refuse the same replies the same way.
   */
  static long blockingIndex(ConsulHttp.Reply reply, Failure onBad) {
    String header = reply.header("X-Consul-Index");
    long next;
    try {
      next = header == null ? 0 : Long.parseUnsignedLong(header.trim());
    } catch (NumberFormatException e) {
      String shown = String.valueOf(header).replaceAll("\\s+", " ").trim(); // not null: it failed to parse
      onBad.fail("bad_index", "X-Consul-Index: " + (shown.length() > 200 ? shown.substring(0, 200) + "..." : shown));
      return 0;
    }
    if (next == 0) {
      onBad.fail("missing_index", "X-Consul-Index missing or 0");
    }
    return next;
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
        onFailure.fail(reason(cause), describe(cause));
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

  /** The metric reason of a transport failure, from Fairway's one failure classification. */
  static String reason(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof HttpConnectTimeoutException) {
        return "connect";
      }
      if (c instanceof HttpTimeoutException) {
        return "timeout";
      }
    }
    return switch (Failures.classify(e)) {
      case CONNECT -> "connect";
      case TLS_HANDSHAKE -> "tls";
      case CERTIFICATE -> "certificate";
      case TIMEOUT -> "timeout";
      case IO -> "io";
      default -> "unexpected";
    };
  }

  /** The failure and its root cause, on one line of at most 200 characters. */
  static String describe(Throwable e) {
    Throwable root = e;
    for (int i = 0; i < 8 && root.getCause() != null && root.getCause() != root; i++) {
      root = root.getCause();
    }
    return firstLine(root == e ? String.valueOf(e) : e + " / " + root);
  }

  /** {@code s} on one line, cut at 200 characters; "" for null. */
  static String firstLine(@Nullable String s) {
    if (s == null) {
      return "";
    }
    String m = s.replaceAll("\\s+", " ").trim();
    return m.length() > 200 ? m.substring(0, 200) + "..." : m;
  }

  static long parseLong(@Nullable String s, long otherwise) {
    if (s == null) {
      return otherwise;
    }
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return otherwise;
    }
  }
}
