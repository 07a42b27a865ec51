package dev.fairway.lb.internal.hedging;

import org.jspecify.annotations.Nullable;

/**
 * An entry of {@link HedgeTimer}'s queue: what a thing the timer fires must carry so that arming it
 * allocates nothing. A race extends it rather than holding one, since every hedgeable call arms a
 * timer and most disarm it again.
 *
 * <p>The fields are the timer's: the arming thread writes {@link #timerDeadline} and {@link
 * #timerNext} before it publishes the node (a compare-and-set on the timer's stack); after that only
 * the timer thread reads or writes them, except {@link #timerQueued} (volatile: read by {@link
 * HedgeTimer#disarm} on any thread) and {@link #timerDisarmedNext} (written before the node is
 * pushed on the disarmed stack).
 */
public abstract class TimerNode implements Runnable {
  protected TimerNode() {}

  long timerDeadline;
  @Nullable TimerNode timerNext;
  @Nullable TimerNode timerDisarmedNext;
  int timerIndex = -1;
  volatile boolean timerQueued;

  /** True while the node still wants {@link #run} at its deadline; the timer drops it otherwise. */
  public abstract boolean pending();

  /** The deadline passed: called on the timer thread, so it must not block. */
  @Override
  public abstract void run();
}
