package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.HedgeTrigger;
import java.io.IOException;
import java.io.InterruptedIOException;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.classic.ExecRuntime;
import org.apache.hc.client5.http.impl.classic.RequestFailedException;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.concurrent.Cancellable;
import org.apache.hc.core5.concurrent.CancellableDependency;
import org.apache.hc.core5.concurrent.ComplexCancellable;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.jspecify.annotations.Nullable;

/**
 * The first attempt of a hedgeable classic exchange, raced against at most one hedge: the race's
 * state and nothing else. The decisions are lb-core's {@link ServiceHedging}, the same as the async
 * client's {@link AsyncHedgeRace} and lb-okhttp's; the race is a {@link HedgeTrigger}, which picks,
 * pays for and sends the hedge as every client's race does.
 *
 * <p><b>The copies and their threads.</b> Each copy ({@link Leg}) runs with its own exec runtime
 * ({@link ExecRuntime#fork}: its own connection, released by its own response) and its own {@link
 * AttemptCancellation}, both under one race-level cancellation that the caller's {@code cancel()}
 * of the request cancels. The first copy is sent on the caller's thread, which blocks in it as
 * without hedging: it is the exchange's own request, aimed at its target in place ({@link
 * BalancedExchange#send}). When the timer fires, the hedge pool sends the hedge, with a request of
 * its own built from the request as it came, aimed at the hedge's target ({@link
 * BalancedExchange#sendCopy}: never the first copy's request, which is down its chain at the same
 * time), and a child of the caller's context ({@link AsyncHedgeRace#forkContext}); that pool thread
 * blocks in the hedge until its headers come. The exchange's own runtime stays unused during the
 * race, and serves a retry after it.
 *
 * <p><b>Who gets the caller.</b> Exactly one copy's outcome (its response's headers, or its
 * failure) goes on to the exchange, which applies the retry rules and returns to the caller:
 * <ul>
 *   <li>a copy that ends while no hedge is in flight: the race is then over before it began, and no
 *       hedge is sent from then on;
 *   <li>else the first copy with a usable response (not a failure status) wins: the other is
 *       settled as superseded (its slot held while its server presumably still works on it, {@link
 *       ServiceHedging#hold}) and cancelled, which closes its connection: a caller's thread blocked
 *       in the first copy's read then gets an exception, finds the hedge won, and returns the
 *       hedge's response (which has its headers already);
 *   <li>else, when both copies failed, the last to fail; the first failure reached passive health
 *       at once, its response was closed, and its exception (if any) travels as a suppressed one.
 * </ul>
 * The caller's cancel ends both copies and charges no target; so does an interrupt of the caller's
 * thread, seen when that thread wakes (blocking socket reads do not answer interrupts: at the first
 * copy's end, or at once while it waits for the hedge).
 *
 * <p>Thread-safe: the first copy ends on the caller's thread, the hedge on a hedge pool thread,
 * and the caller may cancel on another; decisions are made under this race's monitor, and nothing
 * is called out of it under the monitor.
 */
final class ClassicHedgeRace extends HedgeTrigger<ClassicHedgeRace.Leg> implements Cancellable {
  private static final System.Logger LOG = System.getLogger(FairwayHttpClient5.class.getName());

  /** The outcome of the copy the exchange gets, and the other copy's failure when both failed. */
  record Outcome(Attempt attempt, @Nullable ClassicHttpResponse response, @Nullable IOException failure,
      @Nullable IOException earlier) {}

  private final BalancedExchange exchange;
  private final ServiceHedging hedging;
  /** Cancelled by the caller's cancel of the request, which it registers with; each copy's cancellation hangs under it. */
  private final AttemptCancellation cancellation;
  private final Leg first;
  private volatile @Nullable Leg second; // set once, under the monitor, as the hedge is sent

  // Guarded by this.
  private boolean disarmed; // the timer was told once that the race needs it no more
  private @Nullable Leg forwarded; // the copy whose outcome is the exchange's
  private boolean callerGone; // the caller cancelled or was interrupted: both copies end, nothing is forwarded

  ClassicHedgeRace(BalancedExchange exchange, ServiceHedging hedging, Attempt first) {
    this.exchange = exchange;
    this.hedging = hedging;
    this.cancellation = new AttemptCancellation(callers(exchange));
    this.first = new Leg(first, exchange.scope().clientContext);
  }

  /** What the caller cancels: the request, when it can be cancelled (every {@code HttpUriRequestBase} can). */
  private static CancellableDependency callers(BalancedExchange exchange) {
    return exchange.scope().originalRequest instanceof CancellableDependency c ? c : new ComplexCancellable();
  }

  /**
   * Arms the hedge timer, sends the first copy on this (the caller's) thread, and returns the
   * outcome the exchange gets, once it is known; throws if the caller cancelled or was interrupted.
   */
  Outcome run(long delayNanos) throws IOException {
    cancellation.setDependency(this); // the caller's cancel ends the race too
    arm(delayNanos); // before the send: a copy that ends at once disarms after this
    try {
      first.send();
    } catch (RuntimeException e) { // a bug below: thrown to the caller as without hedging, the hedge ended
      callerGone();
      throw e;
    }
    return await();
  }

  /**
   * Waits for the forwarded copy's outcome; the caller's interrupt or cancel ends both copies. When
   * no hedge was sent, the first copy's outcome is the exchange's as it would be without hedging
   * (an interrupt then ends the exchange by its rules only).
   */
  private Outcome await() throws IOException {
    Leg leg;
    boolean interrupted;
    synchronized (this) {
      interrupted = second != null && Thread.currentThread().isInterrupted();
      while (!interrupted && !callerGone && (forwarded == null || !forwarded.reported)) {
        try {
          wait(); // bounded: the hedge is in flight, with its own timeouts, or done
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      leg = callerGone || interrupted ? null : forwarded;
    }
    if (leg == null || exchange.cancelled()) {
      callerGone();
      if (interrupted) {
        Thread.currentThread().interrupt(); // kept for the caller
        throw new InterruptedIOException("interrupted");
      }
      throw new RequestFailedException("Request aborted");
    }
    ClassicHttpResponse response = leg.takeResponse(); // the exchange's from now on: a late cancel does not close it
    Leg other = leg == first ? second : first;
    IOException earlier = null;
    if (other != null && (response == null || exchange.route().outcomes.isFailureStatus(response.getCode()))) {
      synchronized (this) {
        earlier = other.failed ? other.failure : null; // both failed: the earlier one travels as suppressed
      }
    }
    return new Outcome(leg.attempt, response, leg.failure, earlier);
  }

  // ---- the hedge

  @Override
  protected ServiceHedging hedging() {
    return hedging;
  }

  @Override
  protected System.Logger logger() {
    return LOG;
  }

  @Override
  protected @Nullable String affinityKey() {
    return exchange.affinityKey();
  }

  @Override
  protected Target firstTarget() {
    return first.attempt.target();
  }

  @Override
  protected boolean callerStopped() {
    return exchange.cancelled();
  }

  @Override
  protected Leg hedgeCopy(Pick pick) {
    Attempt attempt = exchange.newAttempt(pick);
    exchange.hedgeSent(first.attempt.target(), attempt.target());
    Leg leg = new Leg(attempt, AsyncHedgeRace.forkContext(exchange.scope().clientContext));
    second = leg;
    return leg;
  }

  /** Sends the hedge, and waits for it, on this hedge pool thread. */
  @Override
  protected void sendHedge(Leg leg) {
    leg.send();
  }

  /** Under the monitor: true the first time only, when the caller of this must disarm the timer. */
  private boolean disarmOnce() {
    if (disarmed) {
      return false;
    }
    disarmed = true;
    return true;
  }

  /** The caller cancelled the request (its cancellation reached the race's): both copies end, no target charged. */
  @Override
  public boolean cancel() {
    callerGone();
    return true;
  }

  /**
   * The caller stopped waiting: no hedge from now on, both copies cancelled (their connections
   * closed), their attempts released as the caller's (unless settled already), a response that
   * came meanwhile closed.
   */
  private void callerGone() {
    Leg f;
    Leg s;
    boolean disarm;
    boolean fUnsettled;
    boolean sUnsettled;
    synchronized (this) {
      if (callerGone) {
        return;
      }
      callerGone = true;
      closeHedge();
      disarm = disarmOnce();
      f = first;
      s = second;
      fUnsettled = f.takeUnsettled();
      sUnsettled = s != null && s.takeUnsettled();
      notifyAll();
    }
    if (disarm) {
      hedging.scheduler.disarm(this); // out of the timer's queue within a tick, not at its deadline
    }
    end(f, fUnsettled);
    if (s != null) {
      end(s, sUnsettled);
    }
  }

  private static void end(Leg leg, boolean unsettled) {
    if (unsettled) {
      leg.attempt.cancel();
    }
    leg.abort();
    closeQuietly(leg.takeResponse());
  }

  // ---- the copies

  /** What the race does with the end of one copy. */
  private enum Route {
    /** The copy's outcome is the exchange's. */
    FORWARD,
    /** The copy won with a usable response: the other is settled and cancelled, then as {@link #FORWARD}. */
    WIN,
    /** The copy failed while the other may still win: settled here, kept out of the exchange. */
    FAILED_EARLY,
    /** The race settled the copy already (it lost, or the caller went): its response is closed. */
    LOST
  }

  /** One copy of the request: its attempt, runtime, cancellation and context, and its outcome. */
  final class Leg {
    final Attempt attempt;
    final ExecRuntime runtime;
    final AttemptCancellation legCancellation;
    final HttpClientContext context;
    // Guarded by the race's monitor.
    private @Nullable ClassicHttpResponse response; // its response, until the exchange or a close takes it
    private @Nullable IOException failure; // its exception, if it ended with one
    private boolean failed; // it failed while the other could still win (settled then)
    private boolean lost; // settled by the race: its end only closes what it got
    private boolean reported; // ended, and its settlement is done: the caller may take its outcome

    Leg(Attempt attempt, HttpClientContext context) {
      this.legCancellation = new AttemptCancellation(cancellation);
      this.runtime = exchange.scope().execRuntime.fork(legCancellation);
      this.attempt = attempt;
      this.context = context;
    }

    /**
     * Sends the copy, blocking until its headers or its failure, then settles its end. A runtime
     * exception below (a bug) releases the attempt and ends the copy as a failure; on the caller's
     * thread it is then thrown.
     */
    void send() {
      ClassicHttpResponse got = null;
      IOException thrown = null;
      RuntimeException bug = null;
      try {
        // Only the first copy, on the caller's thread, sends the exchange's own request.
        got = this == first ? exchange.send(attempt, runtime, context) : exchange.sendCopy(attempt, runtime, context);
      } catch (IOException e) {
        thrown = e;
      } catch (HttpException e) {
        thrown = new ClientProtocolException(e.getMessage(), e); // what HttpClient itself throws for it
      } catch (RuntimeException e) {
        attempt.release(); // a bug below, not the target's fault
        bug = e;
        thrown = new ClientProtocolException(e.getMessage(), e);
      }
      ended(got, thrown);
      if (bug != null) {
        if (this == first) {
          throw bug; // the caller's thread: as without hedging
        }
        LOG.log(System.Logger.Level.WARNING, "hedge of a request to " + hedging.host + " failed", bug);
      }
    }

    /** The race decided against this copy: its exchange is cancelled and its connection closed. */
    void abort() {
      legCancellation.cancel();
      runtime.discardEndpoint();
    }

    /** Under the monitor: true if nobody settled this copy yet; from now on it counts as lost. */
    boolean takeUnsettled() {
      boolean unsettled = !lost && !failed;
      lost = true;
      return unsettled;
    }

    /** Under the monitor or after it: the response, which the taker closes or returns. */
    @Nullable ClassicHttpResponse takeResponse() {
      synchronized (ClassicHedgeRace.this) {
        ClassicHttpResponse r = response;
        response = null;
        return r;
      }
    }

    private void ended(@Nullable ClassicHttpResponse got, @Nullable IOException thrown) {
      int code = got == null ? 0 : got.getCode();
      boolean usable = got != null && !exchange.route().outcomes.isFailureStatus(code);
      Route route;
      Leg loser = null;
      boolean disarm = false;
      synchronized (ClassicHedgeRace.this) {
        response = got;
        failure = thrown;
        Leg other = this == first ? second : first;
        if (lost || callerGone) {
          route = Route.LOST;
        } else if (!hedgeSent() || other == null) { // no hedge in flight, and none from now on: this copy alone
          closeHedge();
          forwarded = this;
          disarm = disarmOnce();
          route = Route.FORWARD;
        } else if (usable) {
          forwarded = this;
          disarm = disarmOnce();
          route = Route.WIN;
          if (!other.lost && !other.failed) {
            other.lost = true;
            loser = other;
          }
        } else if (other.failed) { // both failed: the last to fail is the caller's
          forwarded = this;
          disarm = disarmOnce();
          route = Route.FORWARD;
        } else {
          failed = true;
          route = Route.FAILED_EARLY;
        }
        if (route == Route.LOST || route == Route.FAILED_EARLY) {
          response = null; // closed below: never the caller's
        }
      }
      if (disarm) {
        hedging.scheduler.disarm(ClassicHedgeRace.this);
      }
      switch (route) {
        case LOST -> {
          runtime.discardEndpoint();
          closeQuietly(got);
        }
        case FAILED_EARLY -> {
          if (got != null) {
            Header report = got.getFirstHeader(LoadReportHeader.NAME);
            attempt.responded(code, report == null ? null : report.getValue());
            closeQuietly(got); // its connection is discarded or goes back; the failure status is its outcome
            attempt.complete(null);
          } else if (thrown != null) {
            settleFailure(attempt, thrown);
          }
        }
        case WIN -> {
          if (loser != null) {
            settleLoser(loser);
          }
          if (this != first) {
            hedging.won();
          }
          hedging.recordResponse(attempt.target(), attempt.sentNanos());
        }
        case FORWARD -> {
          if (usable) {
            hedging.recordResponse(attempt.target(), attempt.sentNanos());
          }
        }
      }
      synchronized (ClassicHedgeRace.this) {
        reported = true;
        ClassicHedgeRace.this.notifyAll();
      }
    }
  }

  /**
   * Completes the attempt of a copy that failed with {@code failure} while the other could still
   * win: released if the caller cancelled, the failure is an interrupt, or the client's own pool had
   * no connection in time (none of them the target's doing), else the target's failure.
   */
  private void settleFailure(Attempt attempt, IOException failure) {
    if (exchange.cancelled() || Failures.isInterruption(failure)) {
      attempt.cancel();
    } else if (failure instanceof ConnectionRequestTimeoutException) {
      attempt.release();
    } else {
      attempt.complete(failure);
    }
  }

  /**
   * The other copy won while {@code loser} still waited for its answer: superseded, its time so far
   * a lower bound of its target's response time, its slot held while its server presumably still
   * works on it; then cancelled, which closes its connection (a thread blocked reading it wakes).
   */
  private void settleLoser(Leg loser) {
    hedging.recordResponse(loser.attempt.target(), loser.attempt.sentNanos());
    loser.attempt.superseded(false); // the slot first (held or freed), then the cancel
    loser.abort();
  }

  private static void closeQuietly(@Nullable ClassicHttpResponse response) {
    if (response != null) {
      try {
        response.close();
      } catch (IOException e) {
        // Its connection is discarded either way.
      }
    }
  }

  /** The hedge's target if a hedge was sent, else null; for tests. */
  @Nullable Target hedgeTarget() {
    Leg leg = second;
    return leg == null ? null : leg.attempt.target();
  }
}
