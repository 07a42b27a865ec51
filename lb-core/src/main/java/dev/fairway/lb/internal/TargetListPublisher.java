package dev.fairway.lb.internal;

import dev.fairway.lb.Target;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The list one discovery source publishes, shared by the Consul, Kubernetes and DNS sources: it
 * compares each new list with the current one and calls the subscribers only on a real change
 * ({@link Targets#sameTargets}: ids, addresses, weights, zones, health, metadata, round-trip times;
 * order ignored), counts {@code updated} and {@code emptied} into the source's {@link
 * DiscoveryMetrics}, and owns {@code whenReady()}: completed by the first list; failed by {@link
 * #failReady} before it (and replaced by a completed one when a list arrives after all); cancelled
 * by {@link #close()} if no list came.
 *
 * <p>Thread-safety: {@link #publish} (from the source's thread) and {@link #subscribe} (from any)
 * take one lock, so a new subscriber sees the current list and then every later one, in order.
 * {@link #targets()} reads one volatile field, written after the subscribers were called, so a list it
 * shows has reached every subscriber. Readiness futures complete outside the lock, so a
 * caller's callback never runs under it.
 *
 * <p>Not public API (see the package documentation).
 */
public final class TargetListPublisher {
  private static final Comparator<Target> BY_ID = Comparator.comparing(Target::id);

  private final String service;
  private final String owner;
  private final System.Logger log;
  private final DiscoveryMetrics metrics;
  private final Object lock = new Object();
  private final CopyOnWriteArrayList<Consumer<List<Target>>> listeners = new CopyOnWriteArrayList<>();
  // Replaced (under lock) only when a list arrives after failReady; volatile for whenReady() readers.
  private volatile CompletableFuture<List<Target>> ready = new CompletableFuture<>();
  private boolean closed; // guarded by lock

  /** Published via volatile; an immutable list sorted by id. */
  private volatile List<Target> targets = List.of();

  /**
   * @param service the service, which starts every log line
   * @param owner the source as the cancellation of {@link #whenReady()} names it, such as {@code
   *     ConsulTargetSource(orders)}
   * @param log the source's own logger, so its lines keep their logger name
   */
  public TargetListPublisher(String service, String owner, System.Logger log, DiscoveryMetrics metrics) {
    this.service = service;
    this.owner = owner;
    this.log = log;
    this.metrics = metrics;
  }

  /** The current list: immutable, sorted by id. */
  public List<Target> targets() {
    return targets;
  }

  /**
   * Calls {@code listener} with the current list at once, then with every change; closing the result
   * stops it. A listener that throws on the first call is not kept, and the exception propagates.
   */
  public AutoCloseable subscribe(Consumer<List<Target>> listener) {
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

  /** A copy of the readiness future, so a caller cannot complete the source's own. */
  public CompletableFuture<List<Target>> whenReady() {
    return ready.copy();
  }

  /** Fails {@link #whenReady()} with {@code cause} if no list came yet; a later list replaces the failure. */
  public void failReady(Throwable cause) {
    ready.completeExceptionally(cause);
  }

  /**
   * Publishes {@code next} (sorted by id) if it differs from the current list, and completes {@link
   * #whenReady()} either way. Nothing after {@link #close()}. A non-empty list replaced by an empty one
   * is honoured, logged with {@code whyEmpty} (what the backend said, such as {@code "Consul now lists
   * no usable instance"}) and counted as {@code emptied}. A failing subscriber is logged and skipped.
   */
  public void publish(List<Target> next, String whyEmpty) {
    List<Target> sorted = new ArrayList<>(next);
    sorted.sort(BY_ID);
    List<Target> list = List.copyOf(sorted);
    CompletableFuture<List<Target>> toComplete;
    synchronized (lock) {
      if (closed) {
        return;
      }
      List<Target> previous = targets;
      if (!Targets.sameTargets(previous, list)) {
        if (list.isEmpty() && !previous.isEmpty()) {
          log.log(Level.WARNING, "{0}: {1} (had {2}); honouring the empty list", service, whyEmpty, previous.size());
          metrics.emptied();
        }
        for (Consumer<List<Target>> l : listeners) {
          try {
            l.accept(list);
          } catch (RuntimeException e) {
            log.log(Level.WARNING, service + ": a target listener failed", e);
          }
        }
        // Only now: once targets() shows a list, every subscriber has been given it.
        targets = list;
        metrics.updated();
      }
      if (ready.isCompletedExceptionally()) {
        ready = new CompletableFuture<>(); // a list after all: readiness no longer reports the failure
      }
      toComplete = ready;
    }
    toComplete.complete(list);
  }

  /** Drops the subscribers; {@link #whenReady()} fails if it had not completed. {@link #targets()} stays. */
  public void close() {
    CompletableFuture<List<Target>> toCancel;
    synchronized (lock) {
      closed = true;
      listeners.clear();
      toCancel = ready;
    }
    toCancel.completeExceptionally(new CancellationException(owner + " closed"));
  }
}
