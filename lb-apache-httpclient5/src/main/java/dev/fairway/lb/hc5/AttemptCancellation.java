package dev.fairway.lb.hc5;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hc.core5.concurrent.Cancellable;
import org.apache.hc.core5.concurrent.CancellableDependency;

/**
 * The cancellation of one async attempt, standing between the caller's future and the chain
 * elements after Fairway's: it keeps every dependency they set, and a cancel cancels them all.
 *
 * <p>Why not the caller's future itself: a {@link CancellableDependency} keeps only the dependency
 * set last, and on a pooled connection HttpClient 5 sets them out of order. Its connect step leases
 * the endpoint with a callback that, when the pool has a connection, runs at once, inside the
 * lease, down to the transport step, which starts the exchange and sets the dependency that
 * cancels it; then the lease returns and the connect step sets the lease, done already, as the
 * dependency. A cancel then cancelled only that finished lease, so the exchange went on until the
 * socket timeout, and so did the attempt's slot. Cancelling every dependency instead is safe: one
 * that is done ignores it.
 *
 * <p>Thread-safe: the chain sets dependencies on the I/O reactor's threads while the caller may
 * cancel on its own; each dependency is cancelled at most once.
 */
final class AttemptCancellation implements CancellableDependency {
  private final CancellableDependency exchange;
  private final AtomicBoolean cancelled = new AtomicBoolean();
  private final ConcurrentLinkedDeque<Cancellable> dependencies = new ConcurrentLinkedDeque<>();

  /** Cancelled with {@code exchange} (the caller's future), which it registers with at once. */
  AttemptCancellation(CancellableDependency exchange) {
    this.exchange = exchange;
    exchange.setDependency(this); // cancels this at once if the caller cancelled already
  }

  @Override
  public void setDependency(Cancellable dependency) {
    dependencies.addFirst(dependency);
    if (isCancelled()) {
      cancelDependencies(); // the cancel came first, or raced this: nothing set after it is missed
    }
  }

  @Override
  public boolean isCancelled() {
    return cancelled.get() || exchange.isCancelled();
  }

  @Override
  public boolean cancel() {
    if (cancelled.compareAndSet(false, true)) {
      cancelDependencies();
      return true;
    }
    return false;
  }

  /** The latest first: the exchange in progress before the lease that led to it. */
  private void cancelDependencies() {
    Cancellable dependency;
    while ((dependency = dependencies.pollFirst()) != null) {
      dependency.cancel();
    }
  }
}
