package dev.fairway.lb;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * fly.io-proxy semantics. Below its soft limit a target is chosen by closeness: same zone as the
 * balancer's {@code localZone} first, then lower {@link Target#roundTripNanos()} (unknown last: the
 * fly proxy ranks by measured round-trip time), then lower latency average, at random among equals
 * (the scan starts at a random position). When every target is at or above soft, the least loaded one below
 * its hard limit is chosen. The in-flight increment is a compare-and-set bounded by the hard limit,
 * so the hard limit holds under any concurrency. Above 16 targets the rules are applied to a random
 * sample (local zone first), falling back to a full scan only when the sample has no slot. When
 * every target is at hard, the pick waits in a
 * FIFO queue (at most {@code maxQueue} callers) for up to {@code maxWait}.
 */
final class ConcurrencyLimitedStrategy extends BuiltinStrategy {
  /** Beyond 16 a full scan costs more than the pick itself (one cache line per target). */
  static final int FULL_SCAN_LIMIT = 16;
  static final int SAMPLES = 8;
  final int softLimit;
  final int hardLimit;
  final Duration maxWait;
  final int maxQueue;

  ConcurrencyLimitedStrategy(int softLimit, int hardLimit, Duration maxWait, int maxQueue) {
    if (softLimit < 1 || softLimit > 1_000_000) {
      throw new IllegalArgumentException("softLimit: " + softLimit + " (expected: 1..1000000)");
    }
    if (hardLimit < softLimit || hardLimit > 1_000_000) {
      throw new IllegalArgumentException(
          "hardLimit: " + hardLimit + " (expected: softLimit (" + softLimit + ")..1000000)");
    }
    if (maxWait == null || maxWait.isNegative() || maxWait.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("maxWait: " + maxWait + " (expected: 0s..10m)");
    }
    this.softLimit = softLimit;
    this.hardLimit = hardLimit;
    this.maxWait = maxWait;
    this.maxQueue = maxQueue;
  }

  @Override
  public String name() {
    return "concurrency-limited";
  }

  @Override
  boolean ranksByZone() {
    return true;
  }

  @Override
  public String toString() {
    return name() + "(soft=" + softLimit + ", hard=" + hardLimit + ", maxWait=" + maxWait + ")";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    return new Attached(context);
  }

  final class Attached extends AttachedStrategy {
    /** The longest single park: a wait re-reads the (injected) ticker at least this often. */
    static final long MAX_PARK_NANOS = 10_000_000L;
    final BalancerContext context;
    final WaitQueue queue = new WaitQueue(maxQueue);

    Attached(BalancerContext context) {
      this.context = context;
    }

    @Override
    Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
      return new LimitedSelector(snapshot, context, queue);
    }

    @Override
    void onRelease(TrackedTarget target) {
      if (queue.hasWaiters()) {
        queue.wakeHead();
      }
    }

    @Override
    void onPublish() {
      if (queue.hasWaiters()) {
        queue.wakeHead(); // the new snapshot may have capacity (a new or returning target)
      }
    }

    @Override
    void close() {
      queue.wakeAll();
    }

    /**
     * Waits in FIFO order for a slot: only the head of the queue tries to take one, and new callers
     * queue behind it (the selector sends them here while anyone waits). The head is woken by a
     * release and by every published snapshot; the deadline is read from the balancer's ticker.
     */
    @Override
    @Nullable TrackedTarget awaitSlot(@Nullable String key, @Nullable Set<Target> exclude,
        java.util.function.Supplier<PublishedSnapshot> published) throws NoTargetAvailableException {
      if (!queue.hasWaiters() && published.get().selector instanceof LimitedSelector current
          && !current.anyAllowed(exclude)) {
        return null; // nothing was full: every target is excluded
      }
      String service = context.service;
      long waitNanos = maxWait.toNanos();
      if (waitNanos == 0) {
        throw NoTargetAvailableException.of(service, atHardLimit(published.get().snapshot));
      }
      Thread me = Thread.currentThread();
      if (!queue.enter(me)) {
        throw NoTargetAvailableException.of(service,
            atHardLimit(published.get().snapshot) + ", and " + maxQueue + " callers are already waiting");
      }
      long deadline = context.ticker.getAsLong() + waitNanos;
      try {
        for (;;) {
          PublishedSnapshot p = published.get();
          TargetSnapshot s = p.snapshot;
          if (p.selector == null) {
            throw NoTargetAvailableException.of(service, s.unavailableReason);
          }
          if (queue.isHead(me)) {
            LimitedSelector selector = (LimitedSelector) p.selector;
            TrackedTarget t = selector.take(exclude);
            if (t != null) {
              return t;
            }
            if (!selector.anyAllowed(exclude)) {
              throw NoTargetAvailableException.of(service,
                  "all " + s.pickable.length + " available targets are excluded");
            }
          }
          long left = deadline - context.ticker.getAsLong();
          if (left <= 0) {
            throw NoTargetAvailableException.of(service,
                atHardLimit(s) + "; waited " + maxWait.toMillis() + " ms for a slot");
          }
          LockSupport.parkNanos(this, Math.min(left, MAX_PARK_NANOS));
          if (Thread.interrupted()) {
            me.interrupt();
            throw NoTargetAvailableException.of(service, "interrupted while waiting for a slot");
          }
        }
      } finally {
        queue.leave(me);
      }
    }

    private String atHardLimit(TargetSnapshot s) {
      return "all " + s.pickable.length + " targets are at their hard limit of " + hardLimit + " calls in flight";
    }

    @Override
    int waiting() {
      return queue.size.get();
    }
  }

  /** Callers waiting for a slot, first come first served. Only the head tries to take a slot. */
  static final class WaitQueue {
    private final ConcurrentLinkedQueue<Thread> waiters = new ConcurrentLinkedQueue<>();
    final AtomicInteger size = new AtomicInteger();
    private final int max;

    WaitQueue(int max) {
      this.max = max;
    }

    boolean enter(Thread t) {
      if (size.incrementAndGet() > max) {
        size.decrementAndGet();
        return false;
      }
      waiters.add(t);
      return true;
    }

    void leave(Thread t) {
      if (waiters.remove(t)) {
        size.decrementAndGet();
      }
      wakeHead();
    }

    boolean isHead(Thread t) {
      return waiters.peek() == t;
    }

    boolean hasWaiters() {
      return size.get() > 0;
    }

    void wakeHead() {
      Thread head = waiters.peek();
      if (head != null) {
        LockSupport.unpark(head);
      }
    }

    void wakeAll() {
      for (Thread t : waiters) {
        LockSupport.unpark(t);
      }
    }
  }

  final class LimitedSelector extends Selector {
    private final TrackedTarget[] targets;
    private final int[] zoneRank;
    /** Each target's {@link Target#roundTripNanos()}, Long.MAX_VALUE when unknown (ranks last). */
    private final long[] roundTrip;
    /** Indices of the targets in the local zone (all of them when no zone is set). */
    private final int[] local;
    private final RandomSource random;
    private final WaitQueue queue;

    LimitedSelector(TargetSnapshot snapshot, BalancerContext context, WaitQueue queue) {
      this.queue = queue;
      this.targets = snapshot.pickable;
      this.zoneRank = new int[targets.length];
      this.roundTrip = new long[targets.length];
      for (int i = 0; i < targets.length; i++) {
        zoneRank[i] = context.localZone.isEmpty() || context.localZone.equals(targets[i].target.zone()) ? 0 : 1;
        roundTrip[i] = Selector.roundTripRank(targets[i]);
      }
      this.local = java.util.stream.IntStream.range(0, targets.length).filter(i -> zoneRank[i] == 0).toArray();
      this.random = context.random;
    }

    @Override
    boolean acquiresSlot() {
      return true;
    }

    /**
     * For a new caller: nothing while others wait, so nobody overtakes the queue (the balancer then
     * calls {@link Attached#awaitSlot}, which queues it).
     */
    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      return queue.hasWaiters() ? null : take(exclude);
    }

    /** True if some target is not excluded: then a null from {@link #take} means every one is full. */
    boolean anyAllowed(@Nullable Set<Target> exclude) {
      for (TrackedTarget t : targets) {
        if (!excluded(t, exclude)) {
          return true;
        }
      }
      return false;
    }

    /**
     * Takes a slot by the rules above: the target whose slot it took, or null when every allowed
     * target is at its hard limit or every one is excluded ({@link #anyAllowed} tells which).
     */
    @Nullable TrackedTarget take(@Nullable Set<Target> exclude) {
      int n = targets.length;
      if (n > FULL_SCAN_LIMIT) {
        TrackedTarget sampled = selectFromSample(exclude);
        if (sampled != null) {
          return sampled;
        }
        // The sample found no slot: scan everything before concluding that all are at hard.
      }
      for (int attempt = 0; attempt < 4; attempt++) {
        int start = n == 1 ? 0 : random.nextInt(n);
        int closest = -1; // best under soft, by (zone, latency)
        int leastLoaded = -1; // best under hard, by (in-flight, zone, latency)
        boolean anyAllowed = false;
        for (int k = 0; k < n; k++) {
          int i = start + k;
          if (i >= n) {
            i -= n;
          }
          TrackedTarget t = targets[i];
          if (excluded(t, exclude)) {
            continue;
          }
          anyAllowed = true;
          int load = t.inFlight;
          if (load < softLimit && (closest < 0 || closer(i, closest))) {
            closest = i;
          }
          if (load < hardLimit
              && (leastLoaded < 0
                  || load < targets[leastLoaded].inFlight
                  || (load == targets[leastLoaded].inFlight && closer(i, leastLoaded)))) {
            leastLoaded = i;
          }
        }
        if (!anyAllowed) {
          return null;
        }
        int chosen = closest >= 0 ? closest : leastLoaded;
        if (chosen < 0) {
          return null; // every allowed target is at hard
        }
        if (targets[chosen].tryAcquire(hardLimit)) {
          return targets[chosen];
        }
        // Lost a race for the last slot below hard: look again.
      }
      return null;
    }

    /**
     * Above {@value #FULL_SCAN_LIMIT} targets: {@value #SAMPLES} random local-zone targets (if any),
     * then as many from everywhere, applying the same rules to the sample, so a pick stays O(1)
     * while there is room. Null when the sample had no slot (the caller then scans everything).
     */
    private @Nullable TrackedTarget selectFromSample(@Nullable Set<Target> exclude) {
      int closest = -1;
      int leastLoaded = -1;
      for (int k = 0; k < 2 * SAMPLES; k++) {
        int i = k < SAMPLES && local.length > 0 ? local[random.nextInt(local.length)] : random.nextInt(targets.length);
        TrackedTarget t = targets[i];
        if (excluded(t, exclude)) {
          continue;
        }
        int load = t.inFlight;
        if (load < softLimit && (closest < 0 || closer(i, closest))) {
          closest = i;
        }
        if (load < hardLimit && (leastLoaded < 0 || load < targets[leastLoaded].inFlight)) {
          leastLoaded = i;
        }
        if (k == SAMPLES - 1 && closest >= 0 && zoneRank[closest] == 0) {
          break; // a local target under soft: nothing further away can be closer
        }
      }
      int chosen = closest >= 0 ? closest : leastLoaded;
      return chosen >= 0 && targets[chosen].tryAcquire(hardLimit) ? targets[chosen] : null;
    }

    /** Closeness: the local zone first, then the lower round-trip time (unknown last), then latency. */
    private boolean closer(int a, int b) {
      if (zoneRank[a] != zoneRank[b]) {
        return zoneRank[a] < zoneRank[b];
      }
      if (roundTrip[a] != roundTrip[b]) {
        return roundTrip[a] < roundTrip[b];
      }
      return targets[a].ewmaNanos < targets[b].ewmaNanos;
    }
  }
}
