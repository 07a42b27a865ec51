package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.HedgingPolicy;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The hedge timer of every client integration in the JVM: one daemon thread that fires each race's hedge
 * when its delay has passed, unless the race disarmed it first. Most timers are disarmed (the first
 * copy answered in time), so arming and disarming are what must be cheap: arming is one
 * compare-and-set on a stack of new timers, with no object allocated (the race is its own timer
 * entry, a {@link TimerNode}) and no wake-up of the timer thread while it is active; disarming a timer the thread has
 * not taken in yet is nothing at all (the race's state already says "no hedge"), and one more
 * compare-and-set otherwise, so that a disarmed timer leaves the thread's queue within a tick.
 *
 * <p>While timers come, the thread wakes every {@link #TICK_NANOS} (1 ms, the shortest hedge
 * delay), takes in the new ones and fires those due: a hedge goes out at most about a tick after
 * its delay, later only when the thread waits for a CPU. After {@link #IDLE_NANOS} without a new
 * timer it parks until the next one arrives (the only arm that costs a wake-up).
 *
 * <p>The same ticks run the maintenance of services that hold losing copies: a service that holds a
 * copy asks to be watched ({@link #watch}), and every pass calls its {@link ServiceHedging#tick}
 * until it holds nothing, so a hold ends on time though no call comes. The thread does not park
 * while anything is held.
 *
 * <p>The queue (a binary heap by deadline, each entry knowing its index) is touched by the timer
 * thread only. Thread-safe.
 */
public final class HedgeTimer implements Hedger.Scheduler {
  // Named after a public type, as every Fairway logger is (docs/operations.md).
  private static final System.Logger LOG = System.getLogger(HedgingPolicy.class.getName());

  public static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  public static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** The one timer, its thread started on first use. */
  public static final HedgeTimer SHARED = new HedgeTimer("fairway-hedge-timer", System::nanoTime);

  private final @Nullable String threadName; // null: no thread, tests call runDue by hand
  private final LongSupplier ticker;
  private final AtomicReference<@Nullable TimerNode> arrived = new AtomicReference<>(); // a stack, linked by timerNext
  private final AtomicReference<@Nullable TimerNode> disarmed = new AtomicReference<>(); // linked by timerDisarmedNext
  private volatile @Nullable Thread thread;
  private volatile boolean parked; // the thread parks without a deadline: an arm must wake it
  /** Services holding losing copies: maintained on every pass until they hold none. */
  private final Set<ServiceHedging> holding = ConcurrentHashMap.newKeySet();

  // Owned by the timer thread.
  private TimerNode[] heap = new TimerNode[64];
  private int size;

  public HedgeTimer(@Nullable String threadName, LongSupplier ticker) {
    this.threadName = threadName;
    this.ticker = ticker;
  }

  @Override
  public void arm(TimerNode node, long delayNanos) {
    node.timerDeadline = ticker.getAsLong() + delayNanos;
    TimerNode head;
    do {
      head = arrived.get();
      node.timerNext = head;
    } while (!arrived.compareAndSet(head, node));
    Thread t = thread;
    if (t == null) {
      if (threadName != null) {
        start();
      }
    } else if (parked) {
      LockSupport.unpark(t);
    }
  }

  @Override
  public void disarm(TimerNode node) {
    // The node's owner closed its state before calling this, and the timer thread marks an entry queued
    // before it reads that state: one of the two sees the other, so a queued entry is never missed.
    if (node.timerQueued) {
      TimerNode head;
      do {
        head = disarmed.get();
        node.timerDisarmedNext = head;
      } while (!disarmed.compareAndSet(head, node));
    }
  }

  @Override
  public void watch(ServiceHedging hedging) {
    holding.add(hedging);
    Thread t = thread;
    if (t == null) {
      if (threadName != null) {
        start();
      }
    } else if (parked) {
      LockSupport.unpark(t);
    }
  }

  private synchronized void start() {
    if (thread == null && threadName != null) {
      Thread t = new Thread(this::loop, threadName);
      t.setDaemon(true);
      thread = t;
      t.start();
    }
  }

  private void loop() {
    long lastArrival = ticker.getAsLong();
    for (;;) {
      long now = ticker.getAsLong();
      if (runDue(now)) {
        lastArrival = now;
      }
      if (size == 0 && arrived.get() == null && holding.isEmpty() && now - lastArrival >= IDLE_NANOS) {
        parked = true;
        // an arm or a watch that saw parked == false has pushed before these reads
        if (arrived.get() == null && holding.isEmpty()) {
          LockSupport.park(this);
        }
        parked = false;
        lastArrival = ticker.getAsLong();
        continue;
      }
      LockSupport.parkNanos(this, nextWaitNanos(now));
    }
  }

  /**
   * One pass of the timer thread at {@code now}: takes in new and disarmed timers and fires those
   * due. True if new timers had arrived. Tests call it by hand on a timer without a thread.
   */
  public boolean runDue(long now) {
    boolean any = takeArrivals();
    takeDisarmed();
    while (size > 0 && heap[0].timerDeadline - now <= 0) {
      fire(poll());
    }
    if (!holding.isEmpty()) {
      expireHolds();
    }
    return any;
  }

  /** Runs the watched services' maintenance; stops watching a service that holds nothing. */
  private void expireHolds() {
    // A concurrent set: removing and adding while iterating is safe, and an element added now may
    // or may not be seen by this pass (the next one sees it).
    for (Iterator<ServiceHedging> it = holding.iterator(); it.hasNext(); ) {
      ServiceHedging hedging = it.next();
      boolean stillHolding;
      try {
        stillHolding = hedging.tick();
      } catch (RuntimeException e) { // the timer must outlive whatever one release does
        LOG.log(System.Logger.Level.WARNING, "releasing held hedge copies failed", e);
        stillHolding = hedging.heldLosers() > 0;
      }
      if (!stillHolding) {
        it.remove(); // before the service hears of it: a hold from now on adds it back
        if (hedging.unwatched()) {
          holding.add(hedging);
        }
      }
    }
  }

  /** Services whose holds this timer ends; for tests. */
  public int watching() {
    return holding.size();
  }

  /** How long the thread may sleep after a pass at {@code now}: until the next deadline, at most a tick. */
  public long nextWaitNanos(long now) {
    return size > 0 ? Math.max(0, Math.min(TICK_NANOS, heap[0].timerDeadline - now)) : TICK_NANOS;
  }

  /** Moves new timers into the heap, dropping those disarmed meanwhile; true if there were any. */
  private boolean takeArrivals() {
    TimerNode node = arrived.getAndSet(null);
    boolean any = node != null;
    while (node != null) {
      TimerNode next = node.timerNext;
      node.timerNext = null;
      node.timerQueued = true;
      if (node.pending()) {
        add(node);
      } else {
        node.timerQueued = false;
      }
      node = next;
    }
    return any;
  }

  private void takeDisarmed() {
    TimerNode node = disarmed.getAndSet(null);
    while (node != null) {
      TimerNode next = node.timerDisarmedNext;
      node.timerDisarmedNext = null;
      if (node.timerIndex >= 0) {
        remove(node.timerIndex);
      }
      node = next;
    }
  }

  private static void fire(TimerNode node) {
    if (!node.pending()) {
      return;
    }
    try {
      node.run();
    } catch (Throwable t) { // the timer must outlive whatever one node does
      LOG.log(System.Logger.Level.WARNING, "hedge timer task failed", t);
    }
  }

  private void add(TimerNode node) {
    if (size == heap.length) {
      heap = Arrays.copyOf(heap, size * 2);
    }
    int i = size++;
    heap[i] = node;
    node.timerIndex = i;
    siftUp(i);
  }

  private TimerNode poll() {
    TimerNode first = heap[0];
    remove(0);
    return first;
  }

  private void remove(int i) {
    TimerNode removed = heap[i];
    removed.timerIndex = -1;
    removed.timerQueued = false;
    int last = --size;
    if (i != last) {
      TimerNode moved = heap[last];
      heap[i] = moved;
      moved.timerIndex = i;
      heap[last] = null;
      siftDown(i);
      if (heap[i] == moved) {
        siftUp(i);
      }
    } else {
      heap[last] = null;
    }
    if (heap.length > 64 && size < heap.length / 4) {
      heap = Arrays.copyOf(heap, heap.length / 2); // a burst's queue does not stay allocated
    }
  }

  private void siftUp(int i) {
    TimerNode node = heap[i];
    while (i > 0) {
      int parent = (i - 1) >>> 1;
      TimerNode p = heap[parent];
      if (p.timerDeadline - node.timerDeadline <= 0) {
        break;
      }
      heap[i] = p;
      p.timerIndex = i;
      i = parent;
    }
    heap[i] = node;
    node.timerIndex = i;
  }

  private void siftDown(int i) {
    TimerNode node = heap[i];
    int half = size >>> 1;
    while (i < half) {
      int child = 2 * i + 1;
      int right = child + 1;
      if (right < size && heap[right].timerDeadline - heap[child].timerDeadline < 0) {
        child = right;
      }
      TimerNode c = heap[child];
      if (node.timerDeadline - c.timerDeadline <= 0) {
        break;
      }
      heap[i] = c;
      c.timerIndex = i;
      i = child;
    }
    heap[i] = node;
    node.timerIndex = i;
  }

  /** Timers in the queue; for tests of a timer without a thread. */
  public int queued() {
    return size;
  }
}
