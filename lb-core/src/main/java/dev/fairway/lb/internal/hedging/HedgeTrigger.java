package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * The hedge's half of a race, the same in every client's race (lb-okhttp's, the JDK client's,
 * HttpClient 5's classic and async): whether a hedge may still be sent, what the hedge timer's
 * firing does, and the order in which the hedge is picked, paid for and published. Each race keeps
 * its copies, its decision and how it sends a copy; this class asks it only those.
 *
 * <p>The hedge's state moves PENDING (the timer has not fired) → SENDING (the hedge is being
 * picked) → SENT, or to CLOSED (no hedge will be sent) from PENDING or SENDING. Changes are
 * compare-and-sets, so a call that needs no hedge closes it with one and never takes the monitor;
 * from SENDING the state changes only under the race's monitor ({@code synchronized (this)}), which
 * is the monitor the race's own decisions use: so a race that decides under it and a hedge being
 * published see one order.
 *
 * <p>When the timer fires ({@link #run}, on the timer's thread, which must not block), the hedge
 * pool picks the hedge's target ({@link ServiceHedging#chooseHedge}, given how long the first copy
 * has run: the delay), takes a token from both budgets, makes the copy under the monitor ({@link
 * #hedgeCopy}) and sends it ({@link #sendHedge}) outside it. A bug there (a strategy's, a
 * client's) costs the hedge only: it is logged, and the first copy goes on.
 *
 * @param <C> a race's copy
 */
public abstract class HedgeTrigger<C> extends TimerNode {
  private static final int PENDING = 0; // the timer has not fired
  private static final int SENDING = 1; // the hedge is being picked
  private static final int SENT = 2;
  private static final int CLOSED = 3; // no hedge will be sent

  @SuppressWarnings({"rawtypes", "unchecked"}) // one updater for every C
  private static final AtomicIntegerFieldUpdater<HedgeTrigger<?>> HEDGE =
      (AtomicIntegerFieldUpdater) AtomicIntegerFieldUpdater.newUpdater(HedgeTrigger.class, "hedge");

  private volatile int hedge = PENDING;
  // The hedge delay: written before the timer is armed, read on the hedge's thread after it fired
  // (the timer's queue orders the two); how long the first copy has run when the hedge is picked.
  private long delayNanos;

  protected HedgeTrigger() {}

  /** The service's hedging: its decisions, timer and pool. */
  protected abstract ServiceHedging hedging();

  /** Where the race's messages go: the logger of the client's public type. */
  protected abstract System.Logger logger();

  /** The call's affinity key, given to the hedge's pick; null for none. */
  protected abstract @Nullable String affinityKey();

  /** The first copy's target, which the hedge avoids. */
  protected abstract Target firstTarget();

  /**
   * True if the caller stopped waiting (cancelled, interrupted): then no hedge is sent, and {@link
   * #callerStoppedBeforeHedge} runs after the hedge was closed.
   */
  protected abstract boolean callerStopped();

  /** No hedge was sent because the caller had stopped waiting. Nothing by default. */
  protected void callerStoppedBeforeHedge() {}

  /**
   * The hedge's copy on {@code pick}, now paid for: made and published under the race's monitor
   * (the race's decisions see it from then on); must not block.
   */
  protected abstract C hedgeCopy(Pick pick);

  /** Sends {@code copy}, made by {@link #hedgeCopy}; on a hedge pool thread, out of the monitor. May block. */
  protected abstract void sendHedge(C copy);

  /** Arms the hedge timer to fire after {@code delayNanos}. */
  protected final void arm(long delayNanos) {
    this.delayNanos = delayNanos;
    hedging().scheduler.arm(this, delayNanos);
  }

  /** True while the hedge timer may still send a hedge. */
  @Override
  public final boolean pending() {
    return hedge == PENDING;
  }

  /** True once a hedge was sent (its copy made). */
  protected final boolean hedgeSent() {
    return hedge == SENT;
  }

  /** Closes the hedge if the timer has not fired: true if so (the race is then the first copy alone). */
  protected final boolean closeBeforeFiring() {
    return HEDGE.compareAndSet(this, PENDING, CLOSED);
  }

  /** No hedge from now on, unless one was sent already; true if this closed it. */
  protected final boolean closeHedge() {
    for (;;) {
      int h = hedge;
      if (h != PENDING && h != SENDING) {
        return false;
      }
      if (HEDGE.compareAndSet(this, h, CLOSED)) {
        return true;
      }
    }
  }

  /** The timer fired: the hedge is sent from the hedge pool, since picking and sending may block. */
  @Override
  public final void run() {
    ServiceHedging hedging = hedging();
    try {
      hedging.pool.execute(this::fire);
    } catch (RejectedExecutionException e) {
      closeHedge();
      logger().log(System.Logger.Level.DEBUG, "no hedge for a call to " + hedging.host + ": every hedge thread is busy");
    }
  }

  private void fire() {
    try {
      C copy = claimHedge();
      if (copy != null) {
        sendHedge(copy);
      }
    } catch (RuntimeException | Error e) { // a bug in a strategy, the pick or the client: no hedge, the first copy goes on
      closeHedge();
      logger().log(System.Logger.Level.WARNING, "hedge of a call to " + hedging().host + " failed", e);
    }
  }

  /** The hedge's copy, picked, paid for and published; null if none is to be sent. */
  private @Nullable C claimHedge() {
    if (!HEDGE.compareAndSet(this, PENDING, SENDING)) {
      return null; // decided meanwhile
    }
    if (callerStopped()) {
      closeHedge();
      callerStoppedBeforeHedge();
      return null;
    }
    ServiceHedging hedging = hedging();
    Pick pick = hedging.chooseHedge(affinityKey(), firstTarget(), delayNanos);
    if (pick == null) {
      closeHedge(); // a single target, every other one ejected, or none with a free worker
      return null;
    }
    C copy;
    synchronized (this) { // a decision closes SENDING only under the monitor: both see one order
      if (hedge != SENDING) { // the race was decided meanwhile
        pick.release();
        return null;
      }
      if (!hedging.tryWithdraw()) {
        hedge = CLOSED;
        pick.release();
        hedging.refused();
        return null;
      }
      copy = hedgeCopy(pick);
      hedge = SENT;
    }
    hedging.sent();
    return copy;
  }
}
