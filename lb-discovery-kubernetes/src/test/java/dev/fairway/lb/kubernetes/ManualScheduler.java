package dev.fairway.lb.kubernetes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** Fake time for the watch: steps run only when the test says, delays on a virtual clock. Not thread-safe. */
final class ManualScheduler implements SliceWatch.Scheduler {
  private long now = 1_000_000_000L;
  private long sequence;
  private final List<Task> tasks = new ArrayList<>();

  long nanoTime() {
    return now;
  }

  @Override
  public void execute(Runnable command) {
    schedule(command, 0);
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    Task t = new Task(now + delayNanos, sequence++, task);
    tasks.add(t);
    return t;
  }

  /** Runs every task due now, including those they schedule for now. */
  void runDue() {
    while (true) {
      Task next = tasks.stream().filter(t -> !t.cancelled && t.at <= now)
          .min(Comparator.comparingLong((Task t) -> t.at).thenComparingLong(t -> t.seq)).orElse(null);
      if (next == null) {
        return;
      }
      tasks.remove(next);
      next.done = true;
      next.task.run();
    }
  }

  void advance(long nanos) {
    now += nanos;
    runDue();
  }

  /** The delays, from now, of the tasks waiting (not cancelled), sorted. */
  List<Long> pendingDelays() {
    return tasks.stream().filter(t -> !t.cancelled).map(t -> t.at - now).sorted().toList();
  }

  private static final class Task implements ScheduledFuture<Object> {
    final long at;
    final long seq;
    final Runnable task;
    boolean cancelled;
    boolean done;

    Task(long at, long seq, Runnable task) {
      this.at = at;
      this.seq = seq;
      this.task = task;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(at, TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean was = !done && !cancelled;
      cancelled = true;
      return was;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public boolean isDone() {
      return done || cancelled;
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
