package dev.fairway.lb.okhttp;

import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.HedgeTrigger;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.UndeclaredThrowableException;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * The first attempt of a hedgeable call, raced against at most one hedge: the race's state and
 * nothing else. Each copy is a {@link RaceLeg}; the hedging decisions are the service's ({@link
 * ServiceHedging}); the race is a {@link HedgeTrigger} (a timer node, so that arming its hedge
 * allocates nothing), which picks, pays for and sends the hedge as every client's race does.
 *
 * <p>The first leg runs on the caller's thread ({@link #race}). After the delay the hedge pool
 * picks a target other than the first's ({@link ServiceHedging#chooseHedge}), takes a token from
 * each budget, and runs the hedge ({@link #sendHedge}). The
 * first <em>usable</em> response (not a failure status) wins; the other leg is cancelled (neither a
 * failure nor a success; its pick is held while its server presumably still works on it). A leg
 * that fails or answers a failure status does not end the race while the other may still answer:
 * its failure reaches passive health, and if the other leg fails too the caller gets the first
 * leg's outcome (a response before an exception) with the loop's retry rules applied. Cancelling
 * the caller's call cancels both legs, and then every leg is released, none held or failed. An
 * interrupted caller ({@link Interrupts}) ends the same way: its call is cancelled; and when the
 * timer fires for a caller that is interrupted, no hedge is sent and its call is cancelled.
 *
 * <p>Every leg is settled exactly once: {@link #race} ends in one {@code finally} that disarms the
 * timer and settles each leg whose outcome came before the race was decided and that the caller
 * does not get; a hedge whose outcome comes later is settled by its own thread.
 */
final class HedgeRace extends HedgeTrigger<RaceLeg> {
  private static final System.Logger LOG = System.getLogger(LoadBalancingInterceptor.class.getName());

  final BalancedCall owner;
  private final RaceLeg first;
  /** The thread that runs the first leg: an interrupt of it means the caller stopped waiting. */
  private final Thread caller;
  private volatile @Nullable RaceLeg second; // set once, under the monitor, as the hedge is sent

  // Guarded by this once a hedge may be on its way (SENDING or SENT); the monitor costs no
  // allocation. None changes once the race is finished, so the caller reads them freely then.
  /** While racing, the first leg with a usable response; once finished, the leg the caller gets. */
  private @Nullable RaceLeg chosen;
  private boolean finished; // the race is decided: an outcome from now on is settled by its own thread
  private boolean hedgeEntered; // the hedge passed the interceptors before this one
  private boolean firstPosted; // the first leg's outcome is in
  private boolean secondPosted; // the hedge's outcome came before the race was decided
  // The race cancelled that leg (the other won, or the caller stopped waiting) before its outcome
  // was posted. Only such a leg's failure may be the cancel's own doing.
  private boolean firstCancelledByRace;
  private boolean secondCancelledByRace;

  // Fields are few on purpose: every hedgeable call allocates this object and its first leg, hedged
  // or not.
  HedgeRace(BalancedCall owner, Attempt first) {
    this.owner = owner;
    this.first = RaceLeg.of(this, owner.call(), first);
    this.caller = Thread.currentThread();
  }

  @Override
  protected ServiceHedging hedging() {
    return owner.hedging();
  }

  /** The attempt whose response {@link #race} returned. */
  Attempt chosen() {
    RaceLeg leg = chosen;
    return leg != null ? leg.attempt : first.attempt;
  }

  /** The hedge's target if a hedge was sent, else null. */
  @Nullable Target hedgeTarget() {
    RaceLeg leg = second;
    return leg == null ? null : leg.attempt.target();
  }

  /**
   * Runs the race on the caller's thread: the response of the chosen attempt (not yet completed:
   * the loop reports and tracks it), or the failure when every leg failed (then all are completed).
   */
  Response race(long delayNanos) throws IOException {
    Call call = owner.call();
    ServiceHedging hedging = hedging();
    call.addEventListener(first);
    if (call.isCanceled()) {
      first.call.cancel();
    }
    arm(delayNanos);
    try {
      runFirst(call);
      RaceLeg result;
      if (closeBeforeFiring()) { // answered before the timer fired: no race at all
        chosen = first;
        result = first;
      } else {
        result = decide(call);
      }
      return outcome(result);
    } finally {
      closeHedge(); // already closed or sent, unless something threw before the race was decided
      hedging.scheduler.disarm(this);
      settleLosers();
    }
  }

  /** Runs the first leg; a caller that stopped waiting ends its call here, before anything is settled. */
  private void runFirst(Call call) {
    first.execute();
    Throwable thrown = first.thrown;
    if (undeclared(thrown)) {
      first.thrown = Failures.isInterruption(thrown)
          ? Interrupts.end(call, thrown)
          : new UndeclaredThrowableException(thrown,
              "a call to " + hedging().host + " threw a checked exception it does not declare");
    }
    IOException failure = first.failure();
    if (failure != null && !call.isCanceled() && Interrupts.interrupted(failure)) {
      // The caller stopped waiting: cancelled before anything is settled, so the hedge (sent or
      // not) is cancelled and every copy released, none held or failed.
      first.thrown = Interrupts.end(call, failure);
    }
  }

  /**
   * The timer fired before the first leg's outcome: posts it, waits for the hedge if it may still
   * win, and returns the leg the caller gets; throws when the caller was interrupted meanwhile.
   */
  private RaceLeg decide(Call call) throws InterruptedIOException {
    InterruptedException interrupted = null;
    boolean cancelSecond = false;
    boolean hedgeWon = false;
    RaceLeg result = first;
    synchronized (this) {
      firstPosted = true;
      if (closeHedge() || !hedgeSent()) { // still being picked (now too late), or none was sent
        finished = true;
        chosen = first;
        return first;
      }
      if (chosen == null && first.usable()) {
        chosen = first;
      }
      // Wait for the hedge only once it has come back through this interceptor: until then it
      // runs the application interceptors added before this one, and one of those may wait for
      // a lock this thread holds across proceed() (it is inside that interceptor's proceed).
      // Past this interceptor it needs nothing of this thread, and its own OkHttp timeouts (and
      // the caller's cancel) bound the wait, as they bound an unhedged call's.
      try {
        while (chosen == null && !secondPosted && hedgeEntered) {
          wait(10);
          if (call.isCanceled()) {
            cancelLegs();
          }
        }
      } catch (InterruptedException e) {
        interrupted = e;
      }
      finished = true;
      RaceLeg s = second;
      if (interrupted != null) {
        chosen = null; // the caller gets neither: every leg in is settled as released
      } else if (chosen == first || s == null || !secondPosted) {
        chosen = first;
        cancelSecond = !secondPosted;
        secondCancelledByRace = cancelSecond;
      } else if (chosen == s) { // the hedge won
        result = s;
        hedgeWon = true;
      } else { // both legs failed: a response is worth more to the caller than an exception
        result = first.response != null || s.response == null ? first : s;
        chosen = result;
      }
    }
    if (interrupted != null) {
      throw Interrupts.end(call, interrupted); // cancels both legs: each is released
    }
    RaceLeg s = second;
    if (cancelSecond && s != null) {
      s.call.cancel();
    }
    if (hedgeWon) {
      hedging().won();
    }
    return result;
  }

  /**
   * The chosen leg's response, or its failure (then its attempt is complete, and the other leg's
   * failure travels as a suppressed exception).
   */
  private Response outcome(RaceLeg result) throws IOException {
    Response response = result.response;
    if (response != null) {
      return response;
    }
    IOException failure = result.failure();
    if (failure == null) { // a bug in a later interceptor: the unhedged path lets it through too
      result.attempt.abandon();
      Throwable bug = result.thrown;
      if (bug instanceof Error error) {
        throw error;
      }
      throw (RuntimeException) bug;
    }
    result.attempt.complete(failure);
    RaceLeg other = result == first ? (secondPosted ? second : null) : first;
    IOException otherFailure = other == null ? null : other.failure();
    if (otherFailure != null && otherFailure != failure) {
      failure.addSuppressed(otherFailure);
    }
    throw failure;
  }

  /**
   * Settles each leg whose outcome came before the race was decided and that the caller does not
   * get. A call answered before the timer fired has none and takes no monitor.
   */
  private void settleLosers() {
    if (chosen == first && second == null) {
      return;
    }
    boolean settleFirst;
    RaceLeg settleSecond = null;
    synchronized (this) {
      finished = true; // an outcome from now on is settled by its own thread
      settleFirst = firstPosted && chosen != first;
      RaceLeg s = second;
      if (s != null && secondPosted && chosen != s) {
        settleSecond = s;
      }
    }
    if (settleFirst) {
      first.settle(firstCancelledByRace);
    }
    if (settleSecond != null) {
      settleSecond.settle(secondCancelledByRace);
    }
  }

  /** A leg's copy, back in the interceptor: sent to its target. */
  Response proceed(RaceLeg leg, Interceptor.Chain chain) throws IOException {
    if (leg != first) {
      synchronized (this) {
        hedgeEntered = true;
      }
    }
    return chain.proceed(owner.rewrite(chain.request(), leg.attempt.target()));
  }

  // ---- the hedge (HedgeTrigger picks and pays for it; these are its questions)

  @Override
  protected System.Logger logger() {
    return LOG;
  }

  @Override
  protected @Nullable String affinityKey() {
    return owner.affinityKey();
  }

  @Override
  protected Target firstTarget() {
    return first.attempt.target();
  }

  @Override
  protected boolean callerStopped() {
    return caller.isInterrupted() || owner.call().isCanceled();
  }

  /**
   * No hedge for a caller that stopped waiting. An interrupt cannot end the first copy's blocking
   * read; cancelling the call does, and the caller then throws {@code InterruptedIOException}.
   */
  @Override
  protected void callerStoppedBeforeHedge() {
    Call call = owner.call();
    if (!call.isCanceled()) {
      call.cancel();
    }
  }

  @Override
  protected RaceLeg hedgeCopy(Pick pick) {
    Call call = owner.call();
    // cancelled (released) when the caller's call is, as the first
    RaceLeg leg = RaceLeg.of(this, call, new Attempt(pick, call, owner.route()));
    second = leg;
    return leg;
  }

  /** Runs the hedge on this hedge pool thread, then posts its outcome. */
  @Override
  protected void sendHedge(RaceLeg leg) {
    Call call = owner.call();
    ServiceHedging hedging = hedging();
    if (call.isCanceled()) {
      leg.call.cancel();
    }
    leg.execute();
    Throwable thrown = leg.thrown;
    if (undeclared(thrown)) {
      if (Failures.isInterruption(thrown)) {
        InterruptedIOException interrupted = new InterruptedIOException("interrupted");
        interrupted.initCause(thrown);
        leg.thrown = interrupted; // released, not failed (Attempt#complete)
      } else {
        leg.thrown = new UndeclaredThrowableException(thrown,
            "a hedge to " + hedging.host + " threw a checked exception it does not declare");
      }
    }
    if (leg.thrown != null && leg.failure() == null) { // a bug in a later interceptor: the caller never sees it, so say it here
      LOG.log(System.Logger.Level.WARNING, "hedge of a call to " + hedging.host + " failed with a non-I/O exception",
          leg.thrown);
    }
    boolean cancelFirst = false;
    boolean late;
    boolean cancelledByRace;
    synchronized (this) {
      late = finished;
      if (!late) {
        secondPosted = true;
        if (chosen == null && leg.usable()) {
          chosen = leg;
          cancelFirst = !firstPosted;
          firstCancelledByRace = cancelFirst;
        }
      }
      cancelledByRace = secondCancelledByRace;
      notifyAll();
    }
    if (cancelFirst) {
      first.call.cancel();
    }
    if (late) {
      leg.settle(cancelledByRace);
    }
  }

  /** A checked exception Java cannot see (OkHttp 5's connect step throws {@code InterruptedException}). */
  private static boolean undeclared(@Nullable Throwable thrown) {
    return thrown != null && !(thrown instanceof IOException || thrown instanceof RuntimeException || thrown instanceof Error);
  }

  /** The caller's call was cancelled: so are both legs. */
  void cancelLegs() {
    first.call.cancel();
    RaceLeg leg = second;
    if (leg != null) {
      leg.call.cancel();
    }
  }
}
