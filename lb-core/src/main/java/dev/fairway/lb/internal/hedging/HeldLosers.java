package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.Target;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * The copies of one service's hedged calls that lost the race and were cancelled on the client,
 * while their server most likely goes on working on them: a cancel closes the client's end of the
 * connection, and few servers notice before they answer. Each keeps its in-flight slot on its
 * target until a copy that was sent to the same target <em>after</em> it completes (a server that
 * serves in order has then got to it), or until the policy's hold ({@link
 * dev.fairway.lb.HedgingPolicy#withLoserHold}) passed; with a hold of 0 nothing is held. When the service's
 * balancer closes, every held copy is released ({@link #releaseAll}) and copies that lose later
 * are not held.
 *
 * <p>Driven by {@link ServiceHedging} alone, which also makes a hold end on time whether or not more
 * calls come: while anything is held, the hedge timer's ticks call {@link #expire} through it.
 *
 * <p>Why: releasing the slot at the cancel hides that work from the balancer. At saturation the
 * target whose calls were hedged then looks free, gets more calls, and its queue grows behind work
 * nobody waits for; more of its calls pass the hedge delay, more are hedged, and the queue grows
 * faster (the lab's {@code slowdown} scenario shows this runaway when the slot is freed at the
 * cancel). Holding the slot keeps the balancer's count of the target's load what the target
 * really carries. The copy's lower bound of latency is recorded at the cancel ({@link
 * dev.fairway.lb.Pick#supersededHoldingSlot}), not at the release: a target that gets no later call
 * would otherwise read as slow as the whole hold, and be avoided for it.
 *
 * <p>Thread-safe. Adding and settling lock one target's queue; a completion with nothing held costs
 * one volatile read ({@link #isEmpty}).
 */
public final class HeldLosers {
  private final long maxHoldNanos;

  /** One held copy; {@code release} frees its slot (the client's attempt frees its pick). */
  private record Held(Runnable release, long sentNanos, long heldUntilNanos) {}

  private final ConcurrentHashMap<Target, ArrayDeque<Held>> byTarget = new ConcurrentHashMap<>();
  private final AtomicInteger count = new AtomicInteger();
  private static final AtomicLongFieldUpdater<HeldLosers> NEXT_EXPIRY =
      AtomicLongFieldUpdater.newUpdater(HeldLosers.class, "nextExpiryNanos");
  private volatile long nextExpiryNanos = Long.MAX_VALUE; // no copy is held past it unchecked
  private final AtomicBoolean expiring = new AtomicBoolean();
  private volatile boolean closed;

  public HeldLosers(long maxHoldNanos) {
    this.maxHoldNanos = maxHoldNanos;
  }

  /** False when the policy's hold is 0: a loser's slot is then freed at the cancel. */
  public boolean holds() {
    return maxHoldNanos > 0;
  }

  public boolean isEmpty() {
    return count.get() == 0;
  }

  /** Copies held now. */
  public int held() {
    return count.get();
  }

  /**
   * Holds the slot of a losing copy sent to {@code target} at {@code sentNanos}, from {@code
   * nowNanos}, until {@code release} is run for it (once). True if the copy is held now; false if
   * it was released at once (the target left, or the balancer closed).
   */
  public boolean hold(Target target, Runnable release, long sentNanos, long nowNanos) {
    long until = nowNanos + maxHoldNanos;
    ArrayDeque<Held> queue = byTarget.computeIfAbsent(target, t -> new ArrayDeque<>());
    boolean held = false;
    synchronized (queue) {
      // else forget() or releaseAll() took the queue meanwhile: nothing to hold for
      if (byTarget.get(target) == queue && !closed) {
        queue.addLast(new Held(release, sentNanos, until));
        count.incrementAndGet();
        held = true;
      }
    }
    if (!held) {
      release.run();
      return false;
    }
    expireBy(until);
    if (closed) { // closed while this was added: releaseAll may have missed it
      releaseAll();
      return false;
    }
    return true;
  }

  /** Lowers the time of the next expiry check to {@code nanos} if it is later. */
  private void expireBy(long nanos) {
    for (long next = nextExpiryNanos; nanos - next < 0; next = nextExpiryNanos) {
      if (NEXT_EXPIRY.compareAndSet(this, next, nanos)) {
        return;
      }
    }
  }

  /**
   * A copy sent to {@code target} at {@code sentNanos} completed at {@code nowNanos}: the copies
   * held on that target that were sent before it are released, and so is every copy held for the
   * whole hold on any target.
   */
  public void completed(Target target, long sentNanos, long nowNanos) {
    List<Held> released = null;
    ArrayDeque<Held> queue = byTarget.get(target);
    if (queue != null) {
      synchronized (queue) {
        for (Iterator<Held> it = queue.iterator(); it.hasNext(); ) {
          Held h = it.next();
          if (h.sentNanos - sentNanos < 0) {
            it.remove();
            count.decrementAndGet();
            released = add(released, h);
          }
        }
      }
    }
    release(released);
    expire(nowNanos);
  }

  /** Releases the copies held for the whole hold, if any may be. One caller at a time; the others go on. */
  public void expire(long nowNanos) {
    if (isEmpty() || nowNanos - nextExpiryNanos < 0 || !expiring.compareAndSet(false, true)) {
      return;
    }
    List<Held> released = null;
    try {
      nextExpiryNanos = Long.MAX_VALUE; // a copy held from now on lowers it again (expireBy)
      long next = Long.MAX_VALUE;
      for (ArrayDeque<Held> queue : byTarget.values()) {
        synchronized (queue) {
          for (Iterator<Held> it = queue.iterator(); it.hasNext(); ) {
            Held h = it.next();
            if (nowNanos - h.heldUntilNanos >= 0) {
              it.remove();
              count.decrementAndGet();
              released = add(released, h);
            } else if (h.heldUntilNanos - next < 0) {
              next = h.heldUntilNanos;
            }
          }
        }
      }
      if (next != Long.MAX_VALUE) {
        expireBy(next);
      }
    } finally {
      expiring.set(false);
    }
    release(released);
  }

  /**
   * Releases every held copy, and from now on holds none (a copy that loses later is released at
   * once): the route's balancer closed. Idempotent.
   */
  public void releaseAll() {
    closed = true;
    for (Target target : byTarget.keySet()) {
      forget(target);
    }
  }

  /** Releases every held copy on {@code target}: it left the service. */
  public void forget(Target target) {
    ArrayDeque<Held> queue = byTarget.remove(target);
    if (queue == null) {
      return;
    }
    List<Held> released = null;
    synchronized (queue) {
      for (Held h : queue) {
        released = add(released, h);
      }
      count.addAndGet(-queue.size());
      queue.clear();
    }
    release(released);
  }

  private static List<Held> add(@Nullable List<Held> list, Held h) {
    List<Held> l = list == null ? new ArrayList<>(2) : list;
    l.add(h);
    return l;
  }

  private static void release(@Nullable List<Held> released) {
    if (released != null) {
      for (Held h : released) {
        h.release.run();
      }
    }
  }
}
