package dev.fairway.lb.dns;

import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Targets;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The list one source publishes: compares each new list with the current one and calls the
 * subscribers only on a real change (ids, addresses, weights, metadata; order ignored).
 *
 * <p>Thread-safety: {@link #publish} is called on the source's thread, subscribers from any thread;
 * both take one lock, so a new subscriber sees the current list and then every later one, in order.
 * {@link #targets()} reads one volatile field.
 */
final class TargetPublisher {
  private static final System.Logger LOG = System.getLogger(DnsTargetSource.class.getName());

  private final String service;
  private final DnsMetrics metrics;
  private final Object lock = new Object();
  private final CopyOnWriteArrayList<Consumer<List<Target>>> listeners = new CopyOnWriteArrayList<>();
  private final CompletableFuture<List<Target>> ready = new CompletableFuture<>();
  private boolean closed; // guarded by lock

  /** Published via volatile; an immutable list sorted by id. */
  private volatile List<Target> targets = List.of();

  TargetPublisher(String service, DnsMetrics metrics) {
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
        listeners.remove(listener); // a listener that fails on the first call is not kept
        throw e;
      }
    }
    return () -> listeners.remove(listener);
  }

  CompletableFuture<List<Target>> whenReady() {
    return ready.copy();
  }

  /** Publishes {@code next} if it differs from the current list; completes {@link #whenReady()} either way. */
  void publish(List<Target> next, String emptyBecause) {
    List<Target> sorted = new ArrayList<>(next);
    sorted.sort(Comparator.comparing(Target::id));
    List<Target> list = List.copyOf(sorted);
    synchronized (lock) {
      if (closed) {
        return;
      }
      List<Target> previous = targets;
      if (!Targets.sameTargets(previous, list)) {
        if (list.isEmpty() && !previous.isEmpty()) {
          LOG.log(Level.WARNING, "{0}: DNS now gives no target (had {1}): {2}; honouring the empty list",
              service, previous.size(), emptyBecause);
          metrics.emptied();
        }
        targets = list;
        metrics.updated();
        for (Consumer<List<Target>> l : listeners) {
          try {
            l.accept(list);
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, service + ": a target listener failed", e);
          }
        }
      }
    }
    ready.complete(list);
  }

  /** Drops the subscribers; {@link #whenReady()} fails if it had not completed. {@link #targets()} stays. */
  void close() {
    synchronized (lock) {
      closed = true;
      listeners.clear();
    }
    ready.completeExceptionally(new CancellationException("DnsTargetSource(" + service + ") closed"));
  }
}
