package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.FailureKind;
import dev.fairway.lb.internal.Failures;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The first attempt of a hedgeable call, raced against at most one hedge. Each copy ("leg") is a
 * clone of the caller's call, so each can be cancelled without the other: OkHttp lets one call have
 * one exchange at a time, and cancelling the caller's own call would fail whatever it returns. The
 * clone comes back through the interceptor, which sees the {@link RaceLeg} tag and sends it to the
 * leg's target as it is.
 *
 * <p>The first leg runs on the caller's thread. After the delay the timer hands {@link #fire} to
 * the hedge pool: it picks a target other than the first's, takes a token from the hedge budget and
 * one from the retry budget, and runs the hedge. The first <em>usable</em> response (not a failure
 * status) wins; the other leg is cancelled (neither a failure nor a success; its pick is held by
 * {@link HeldLosers} while its server presumably still works on it). A leg that fails or answers
 * a failure status does not end the race while the other may
 * still answer: its failure reaches passive health, and if the other leg fails too the caller gets
 * the first leg's outcome (a response before an exception) with the loop's retry rules applied.
 * Cancelling the caller's call cancels both legs (through an {@link EventListener} on it), also
 * while the winner's body is read, and then every leg is released, none held or failed. An
 * interrupted caller ({@link Interrupts}) ends the same way: its call is cancelled; and when the
 * timer fires for a caller that is interrupted, no hedge is sent and its call is cancelled.
 *
 * <p>Every outcome is settled exactly once: by the caller's thread while it is still deciding, or
 * by the hedge's thread when its outcome arrives after the caller has returned.
 */
final class HedgedAttempt extends EventListener implements Runnable, RaceLeg {
  private static final System.Logger LOG = System.getLogger(LoadBalancingInterceptor.class.getName());

  private static final int PENDING = 0; // the timer has not fired
  private static final int SENDING = 1; // the hedge is being picked
  private static final int SENT = 2;
  private static final int CLOSED = 3; // no hedge will be sent

  private static final int NONE = 0;
  private static final int FIRST = 1;
  private static final int SECOND = 2;

  /** The hedge's leg: a clone sent to the hedge's target. */
  private static final class HedgeLeg implements RaceLeg {
    private final HedgedAttempt race;
    private final Target target;

    HedgeLeg(HedgedAttempt race, Target target) {
      this.race = race;
      this.target = target;
    }

    @Override
    public Response proceed(Interceptor.Chain chain) throws IOException {
      race.hedgeReachedTheInterceptor();
      return chain.proceed(race.owner.rewrite(chain.request(), target));
    }
  }

  /** What one leg's {@code execute()} gave, once a hedge may race it. */
  private static final class Outcome {
    final Attempt attempt;
    final long startNanos;
    final @Nullable Response response;
    final @Nullable IOException failure;
    final @Nullable Throwable bug; // a RuntimeException or an Error: a bug, not the target's fault

    Outcome(Attempt attempt, long startNanos, @Nullable Response response, @Nullable IOException failure,
        @Nullable Throwable bug) {
      this.attempt = attempt;
      this.startNanos = startNanos;
      this.response = response;
      this.failure = failure;
      this.bug = bug;
    }
  }

  private final BalancedCall owner;
  private final ServiceRoute route;
  private final Hedger hedger;
  private final Attempt first;
  private final Call firstLeg;
  /** The thread that runs the first leg: an interrupt of it means the caller stopped waiting. */
  private final Thread caller;

  private static final AtomicIntegerFieldUpdater<HedgedAttempt> HEDGE =
      AtomicIntegerFieldUpdater.newUpdater(HedgedAttempt.class, "hedge");

  // The hedge's state changes by compare-and-set only: a call that needs no hedge closes it with
  // one CAS and never takes the monitor. The fields below "guarded by this" are the race's, used
  // once a hedge may be on its way (SENDING or SENT); the monitor costs no allocation.
  private volatile int hedge = PENDING;

  // The timer's entry for this race (see HedgeTimer): written by the arming thread before it
  // publishes the race, then by the timer thread only.
  long timerDeadline;
  @Nullable HedgedAttempt timerNext;
  @Nullable HedgedAttempt timerDisarmedNext;
  int timerIndex = -1;
  volatile boolean timerQueued;
  private int winner = NONE; // guarded by this
  private boolean finished; // guarded by this: the caller has its outcome
  private boolean hedgeEntered; // guarded by this: the hedge passed the interceptors before this one
  // Guarded by this: the race cancelled that leg (the other won, or the caller stopped waiting)
  // before its outcome was posted. Only such a leg's failure may be the cancel's own doing.
  private boolean firstCancelledByRace;
  private boolean secondCancelledByRace;
  private @Nullable Outcome firstOutcome; // guarded by this
  private @Nullable Outcome secondOutcome; // guarded by this
  private volatile @Nullable Call secondLeg;
  private volatile @Nullable Target secondTarget;
  private @Nullable Attempt chosen;
  // The hedge delay: written before the timer is armed, read on the hedge's thread after it fired
  // (the timer's queue orders the two); how long the first copy has run when the hedge is picked.
  private long delayNanos;

  // Fields are few on purpose: every hedgeable call allocates this object, hedged or not. The
  // caller's call is the owner's, and the delay goes straight to the timer.
  HedgedAttempt(BalancedCall owner, ServiceRoute route, Hedger hedger, Attempt first) {
    this.owner = owner;
    this.route = route;
    this.hedger = hedger;
    this.first = first;
    this.firstLeg = leg(this);
    this.caller = Thread.currentThread();
  }

  private Call leg(RaceLeg tag) {
    Call leg = owner.call().clone();
    leg.tag(RaceLeg.TAG, tag);
    return leg;
  }

  /** The first leg, back in the interceptor: sent to the first attempt's target. */
  @Override
  public Response proceed(Interceptor.Chain chain) throws IOException {
    return chain.proceed(owner.rewrite(chain.request(), first.target()));
  }

  /** The attempt whose response {@link #race} returned. */
  Attempt chosen() {
    Attempt a = chosen;
    return a != null ? a : first;
  }

  /** The hedge's target if a hedge was sent, else null. */
  @Nullable Target hedgeTarget() {
    return secondTarget;
  }

  /**
   * Runs the race on the caller's thread: the response of the chosen attempt (not yet completed:
   * the loop reports and tracks it), or the failure when every leg failed (then all are completed).
   */
  Response race(long delayNanos) throws IOException {
    Call call = owner.call();
    call.addEventListener(this);
    if (call.isCanceled()) {
      firstLeg.cancel();
    }
    this.delayNanos = delayNanos;
    hedger.scheduler.arm(this, delayNanos);
    // The first leg's outcome stays in locals until a hedge may race it: a call answered before
    // the timer fired allocates no Outcome. The same steps as execute() (which the hedge uses).
    long start = hedger.ticker.getAsLong();
    Response response = null;
    IOException failure = null;
    Throwable bug = null;
    try {
      response = firstLeg.execute();
      if (usable(response)) {
        record(first, start);
      }
    } catch (IOException e) {
      failure = e;
    } catch (RuntimeException | Error e) { // the unhedged path lets these through too, once the pick is settled
      bug = e;
    } catch (Exception e) { // OkHttp 5's connect step throws InterruptedException, though Java cannot see it
      if (Failures.isInterruption(e)) {
        failure = Interrupts.end(call, e);
      } else {
        bug = new UndeclaredThrowableException(e, "a call to " + route.host + " threw a checked exception it does not declare");
      }
    }
    if (failure != null && !call.isCanceled() && Interrupts.interrupted(failure)) {
      // The caller stopped waiting: cancelled before anything is settled, so the hedge (sent or
      // not) is cancelled and every copy released, none held or failed.
      failure = Interrupts.end(call, failure);
    }
    if (HEDGE.compareAndSet(this, PENDING, CLOSED)) { // answered before the timer fired: no race at all
      hedger.scheduler.disarm(this);
      chosen = first;
      return unwrap(first, response, failure, bug, null);
    }
    Outcome f = new Outcome(first, start, response, failure, bug);
    Outcome other = null;
    Outcome result = f;
    boolean cancelSecond = false;
    boolean otherCancelledByRace = false;
    boolean hedgeWon = false;
    InterruptedException interrupted = null;
    Outcome late = null;
    synchronized (this) {
      firstOutcome = f;
      if (close()) { // the hedge was still being picked: too late, the loop decides on this outcome alone
        finished = true;
        result = f;
      } else if (hedge != SENT) { // closed: no hedge was sent
        finished = true;
        result = f;
      } else {
        if (winner == NONE && usable(f)) {
          winner = FIRST;
        }
        // Wait for the hedge only once it has come back through this interceptor: until then it
        // runs the application interceptors added before this one, and one of those may wait for
        // a lock this thread holds across proceed() (it is inside that interceptor's proceed).
        // Past this interceptor it needs nothing of this thread, and its own OkHttp timeouts (and
        // the caller's cancel) bound the wait, as they bound an unhedged call's.
        try {
          while (winner == NONE && secondOutcome == null && hedgeEntered) {
            wait(10);
            if (call.isCanceled()) {
              cancelLegs();
            }
          }
        } catch (InterruptedException e) {
          interrupted = e;
        }
        finished = true; // a hedge outcome arriving from now on is settled by the hedge's thread
        Outcome s = secondOutcome;
        if (interrupted != null) {
          late = s;
        } else if (winner == FIRST || s == null) {
          result = f;
          other = s;
          cancelSecond = s == null;
          secondCancelledByRace = cancelSecond;
        } else if (winner == SECOND) {
          result = s;
          other = f;
          otherCancelledByRace = firstCancelledByRace;
          hedgeWon = true;
        } else { // both legs failed: a response is worth more to the caller than an exception
          result = f.response != null || s.response == null ? f : s;
          other = result == f ? s : f;
        }
      }
    }
    hedger.scheduler.disarm(this);
    if (interrupted != null) {
      InterruptedIOException e = Interrupts.end(call, interrupted); // cancels both legs: each is released
      settleLoser(f, false);
      if (late != null) {
        settleLoser(late, false);
      }
      throw e;
    }
    if (cancelSecond) {
      Call leg = secondLeg;
      if (leg != null) {
        leg.cancel();
      }
    }
    if (other != null) {
      settleLoser(other, otherCancelledByRace);
    }
    if (hedgeWon) {
      route.metrics.hedge(CallMetrics.HEDGE_WON);
    }
    chosen = result.attempt;
    return unwrap(result, other);
  }

  /** The hedge's copy reached this interceptor again (on the hedge's thread). */
  synchronized void hedgeReachedTheInterceptor() {
    hedgeEntered = true;
  }

  /** True while the hedge timer may still send a hedge; for the timer. */
  boolean hedgePending() {
    return hedge == PENDING;
  }

  /** The timer fired: the hedge is sent from the hedge pool, since picking and sending may block. */
  @Override
  public void run() {
    try {
      hedger.legs.execute(this::fire);
    } catch (RejectedExecutionException e) {
      close();
      LOG.log(System.Logger.Level.DEBUG, "no hedge for a call to " + route.host + ": every hedge thread is busy");
    }
  }

  private void fire() {
    try {
      sendHedge();
    } catch (RuntimeException | Error e) { // a bug in a strategy or the pick: no hedge, the first leg goes on
      close();
      LOG.log(System.Logger.Level.WARNING, "hedge of a call to " + route.host + " failed", e);
    }
  }

  private void sendHedge() {
    if (!HEDGE.compareAndSet(this, PENDING, SENDING)) {
      return; // the first copy answered meanwhile
    }
    Call call = owner.call();
    if (caller.isInterrupted() || call.isCanceled()) {
      // No hedge for a caller that stopped waiting. An interrupt cannot end the first copy's
      // blocking read; cancelling the call does, and the caller then throws InterruptedIOException.
      close();
      if (!call.isCanceled()) {
        call.cancel();
      }
      return;
    }
    Pick pick = hedger.pickHedge(route, owner.affinityKey(), first.target(), delayNanos);
    if (pick == null) {
      close(); // a single target, or every other one ejected: a hedge would go nowhere
      return;
    }
    Call leg;
    Attempt second;
    synchronized (this) { // the caller's thread may close SENDING only under the monitor: both see one order
      if (hedge != SENDING) { // the first leg answered meanwhile
        pick.release();
        return;
      }
      if (!withdrawTokens()) {
        hedge = CLOSED;
        pick.release();
        route.metrics.hedge(CallMetrics.HEDGE_BUDGET_EXHAUSTED);
        return;
      }
      leg = leg(new HedgeLeg(this, pick.target()));
      second = new Attempt(pick, owner.call(), route); // cancelled (released) when the caller's call is, as the first
      secondLeg = leg;
      secondTarget = pick.target();
      hedge = SENT;
    }
    route.metrics.hedge(CallMetrics.HEDGE_SENT);
    Hedger.RouteHedging stats = route.hedging;
    if (stats != null) {
      stats.counts.hedge();
    }
    if (owner.call().isCanceled()) {
      leg.cancel();
    }
    Outcome s = execute(leg, second, hedger.ticker.getAsLong());
    if (s.bug != null) { // a bug in a later interceptor: the caller never sees this one, so say it here
      LOG.log(System.Logger.Level.WARNING, "hedge of a call to " + route.host + " failed with a non-I/O exception", s.bug);
    }
    boolean cancelFirst = false;
    boolean late;
    boolean cancelledByRace;
    synchronized (this) {
      secondOutcome = s;
      late = finished;
      if (!late && winner == NONE && usable(s)) {
        winner = SECOND;
        cancelFirst = firstOutcome == null;
        firstCancelledByRace = cancelFirst;
      }
      cancelledByRace = secondCancelledByRace;
      notifyAll();
    }
    if (cancelFirst) {
      firstLeg.cancel();
    }
    if (late) {
      settleLoser(s, cancelledByRace);
    }
  }

  /** One token from the hedges' own budget and one from the retry budget, or neither. */
  private boolean withdrawTokens() {
    Hedger.RouteHedging stats = route.hedging;
    if (stats != null && !stats.budget.tryWithdraw()) {
      return false;
    }
    if (!route.budget.tryWithdraw()) {
      if (stats != null) {
        stats.budget.refund();
      }
      return false;
    }
    return true;
  }

  /** No hedge from now on, unless one was sent already; true if this closed it. */
  private boolean close() {
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

  /** The caller's call was cancelled: so are both legs. */
  @Override
  public void canceled(Call cancelled) {
    cancelLegs();
  }

  private void cancelLegs() {
    firstLeg.cancel();
    Call leg = secondLeg;
    if (leg != null) {
      leg.cancel();
    }
  }

  private Outcome execute(Call leg, Attempt attempt, long startNanos) {
    Response response = null;
    IOException failure = null;
    Throwable bug = null;
    try {
      response = leg.execute();
      if (usable(response)) {
        record(attempt, startNanos);
      }
    } catch (IOException e) {
      failure = e;
    } catch (RuntimeException | Error e) { // the unhedged path lets these through too, once the pick is settled
      bug = e;
    } catch (Exception e) { // OkHttp 5's connect step throws InterruptedException, though Java cannot see it
      if (Failures.isInterruption(e)) {
        InterruptedIOException interrupted = new InterruptedIOException("interrupted");
        interrupted.initCause(e);
        failure = interrupted; // released, not failed (Attempt#complete)
      } else {
        bug = new UndeclaredThrowableException(e, "a hedge to " + route.host + " threw a checked exception it does not declare");
      }
    }
    return new Outcome(attempt, startNanos, response, failure, bug);
  }

  private boolean usable(Outcome outcome) {
    return usable(outcome.response);
  }

  private boolean usable(@Nullable Response response) {
    return response != null && !owner.isFailure(response.code());
  }

  private void record(Attempt attempt, long startNanos) {
    Hedger.RouteHedging stats = route.hedging;
    if (stats != null) {
      hedger.recordLatency(stats, attempt.target(), hedger.ticker.getAsLong() - startNanos);
    }
  }

  /**
   * Completes a leg whose outcome the caller does not get: a usable response is closed and its pick
   * released; a failure status or an I/O error is that target's failure, unless the race had
   * cancelled the leg before its outcome came ({@code cancelledByRace}) and the failure is one a
   * cancel causes (then released, and its running time counted as a response time, as Finagle
   * counts a superseded request). A refused connection, a rejected certificate or a timeout is
   * never a cancel's doing: a leg that failed so just before it was cancelled is a failure for
   * passive health, and its short time stays out of the latency window.
   */
  private void settleLoser(Outcome loser, boolean cancelledByRace) {
    Response response = loser.response;
    if (owner.call().isCanceled()) { // the caller stopped waiting (cancelled or interrupted): released, nothing learnt
      if (response != null) {
        response.close();
      }
      loser.attempt.complete(null); // released: the call is cancelled
      return;
    }
    if (response != null) {
      if (usable(loser)) {
        loser.attempt.superseded(true); // its server answered: the slot is free
      } else {
        loser.attempt.responded(response.code(), response.header(LoadReportHeader.NAME));
        loser.attempt.complete(null);
      }
      response.close();
    } else if (loser.bug != null) {
      loser.attempt.abandon();
    } else {
      if (cancelledByRace && !owner.call().isCanceled() && !failedOnItsOwn(loser.failure)) {
        record(loser.attempt, loser.startNanos); // cancelled because the other leg won: its response time is at least this
        loser.attempt.superseded(false); // its server most likely still works on it: held (HeldLosers)
      } else {
        loser.attempt.complete(loser.failure);
      }
    }
  }

  /** True for a failure a cancel cannot cause: the target's own, even if the leg was cancelled afterwards. */
  private static boolean failedOnItsOwn(@Nullable IOException failure) {
    FailureKind kind = Failures.classifyTarget(failure);
    return kind == FailureKind.CONNECT || kind == FailureKind.CERTIFICATE || kind == FailureKind.TIMEOUT;
  }

  /** The chosen outcome's response, or its failure (then both attempts are complete). */
  private Response unwrap(Outcome result, @Nullable Outcome other) throws IOException {
    return unwrap(result.attempt, result.response, result.failure, result.bug, other);
  }

  private static Response unwrap(Attempt attempt, @Nullable Response response, @Nullable IOException failure,
      @Nullable Throwable bug, @Nullable Outcome other) throws IOException {
    if (response != null) {
      return response;
    }
    if (bug != null) {
      attempt.abandon();
      if (bug instanceof Error error) {
        throw error;
      }
      throw (RuntimeException) bug;
    }
    if (failure == null) {
      throw new IllegalStateException("a leg without an outcome"); // unreachable: execute sets one
    }
    attempt.complete(failure);
    if (other != null && other.failure != null && other.failure != failure) {
      failure.addSuppressed(other.failure);
    }
    throw failure;
  }
}
