package dev.fairway.lb.kubernetes;

import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Targets;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The list one source publishes: compares each merged list with the current one and calls the
 * subscribers only on a real change (ids, addresses, weights, zones, metadata; order ignored). Owns
 * {@link #whenReady()}: completed by the first list, failed by an access refusal before it (and
 * replaced by a completed one when a list arrives after all).
 *
 * <p>Thread-safety: the watch calls in on its loop thread, subscribers from any thread; every change of
 * state happens under one lock, and {@link #targets()} reads one volatile field.
 */
final class TargetPublisher {
  private static final System.Logger LOG = System.getLogger(KubernetesTargetSource.class.getName());

  private final String service;
  private final DiscoveryMetrics metrics;
  private final Object lock = new Object();
  private final CopyOnWriteArrayList<Consumer<List<Target>>> listeners = new CopyOnWriteArrayList<>();
  // Guarded by lock for writes; volatile for whenReady() readers.
  private volatile CompletableFuture<List<Target>> ready = new CompletableFuture<>();
  private boolean closed;

  /** Published via volatile; an immutable list sorted by id. */
  private volatile List<Target> targets = List.of();

  TargetPublisher(String service, DiscoveryMetrics metrics) {
    this.service = service;
    this.metrics = metrics;
  }

  List<Target> targets() {
    return targets;
  }

  AutoCloseable subscribe(Consumer<List<Target>> listener) {
    synchronized (lock) {
      listeners.add(listener);
      try {
        listener.accept(targets);
      } catch (RuntimeException e) {
        listeners.remove(listener);
        throw e;
      }
    }
    return () -> listeners.remove(listener);
  }

  CompletableFuture<List<Target>> whenReady() {
    return ready.copy();
  }

  /** The API server refused access before the first list: {@link #whenReady()} fails with {@code e}. */
  void refused(KubernetesApiException e) {
    synchronized (lock) {
      ready.completeExceptionally(e);
    }
  }

  /** Every merged list; publishes it if it differs from the current one. */
  void publish(List<Target> next) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      List<Target> previous = targets;
      if (!Targets.sameTargets(previous, next)) {
        if (next.isEmpty() && !previous.isEmpty()) {
          LOG.log(Level.WARNING, "{0}: the EndpointSlices now hold no usable endpoint (had {1}); honouring the"
              + " empty list", service, previous.size());
          metrics.emptied();
        }
        targets = next;
        metrics.updated();
        for (Consumer<List<Target>> l : listeners) {
          try {
            l.accept(next);
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, service + ": a target listener failed", e);
          }
        }
      }
      if (ready.isCompletedExceptionally()) {
        ready = CompletableFuture.completedFuture(next);
      } else {
        ready.complete(next);
      }
    }
  }

  /** Drops the subscribers; {@link #whenReady()} fails if it had not completed. {@link #targets()} stays. */
  void close() {
    synchronized (lock) {
      closed = true;
      listeners.clear();
      ready.completeExceptionally(new CancellationException("KubernetesTargetSource(" + service + ") closed"));
    }
  }
}
