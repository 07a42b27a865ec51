package dev.fairway.lb.dns;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fake time for the refresh cycle: {@link #execute} runs at once on the calling thread; a
 * {@link #schedule}d step waits in a queue until the test calls {@link #runNext()}, which moves the
 * clock to its due time first. Every requested wait is recorded in order. Single-threaded, like the
 * cycle it drives.
 */
final class ManualScheduler implements Scheduler {
  private final PriorityQueue<Step> queue =
      new PriorityQueue<>(Comparator.comparingLong((Step s) -> s.at).thenComparingLong(s -> s.seq));
  private final List<Long> waits = new ArrayList<>();
  private long now = 1_000_000_000L;
  private long sequence;

  long nanoTime() {
    return now;
  }

  @Override
  public void execute(Runnable task) {
    task.run();
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    waits.add(TimeUnit.NANOSECONDS.toMillis(delayNanos));
    Step s = new Step(now + delayNanos, sequence++, task);
    queue.add(s);
    return s;
  }

  /** Moves the clock to the next step and runs it. Fails if nothing waits. */
  void runNext() {
    Step s = queue.poll();
    if (s == null) {
      throw new AssertionError("no step is scheduled");
    }
    now = Math.max(now, s.at);
    s.task.run();
  }

  /** Moves the clock forward without running anything. */
  void advance(long millis) {
    now += TimeUnit.MILLISECONDS.toNanos(millis);
  }

  /** Steps waiting (cancelled ones are gone). */
  int pending() {
    return queue.size();
  }

  /** The delay of the next step from now, in milliseconds. */
  long nextInMillis() {
    Step s = queue.peek();
    if (s == null) {
      throw new AssertionError("no step is scheduled");
    }
    return TimeUnit.NANOSECONDS.toMillis(s.at - now);
  }

  /** Every wait asked for so far, in milliseconds, oldest first; and forgets them. */
  List<Long> takeWaitsMillis() {
    List<Long> out = List.copyOf(waits);
    waits.clear();
    return out;
  }

  private final class Step implements ScheduledFuture<Object> {
    final long at;
    final long seq;
    final Runnable task;

    Step(long at, long seq, Runnable task) {
      this.at = at;
      this.seq = seq;
      this.task = task;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(at - now, TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      return queue.remove(this);
    }

    @Override
    public boolean isCancelled() {
      return !queue.contains(this);
    }

    @Override
    public boolean isDone() {
      return !queue.contains(this);
    }

    @Override
    public Object get() {
      return null;
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      return null;
    }
  }
}
