package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.Failures;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.HedgeTrigger;
import java.io.IOException;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecRuntime;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.core5.concurrent.Cancellable;
import org.apache.hc.core5.http.ConnectionRequestTimeoutException;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.nio.AsyncDataConsumer;
import org.apache.hc.core5.http.nio.entity.DiscardingEntityConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The first attempt of a hedgeable async exchange, raced against at most one hedge: the race's
 * state and nothing else. The decisions are lb-core's {@link ServiceHedging} (the delay, the
 * hedge's target, both budgets, what outcomes teach, held losers), the same as lb-okhttp's; the race
 * is a {@link HedgeTrigger} (a timer node, so that arming its hedge allocates nothing), which picks,
 * pays for and sends the hedge as every client's race does.
 *
 * <p><b>The copies.</b> Each copy ({@link Leg}) runs with its own exec runtime ({@link
 * AsyncExecRuntime#fork()}: its own connection) and its own {@link AttemptCancellation}, both
 * registered under one race-level cancellation that the caller's future cancels: cancelling one
 * copy leaves the other alone, and the caller's cancel ends both. The first copy keeps the caller's
 * context; the hedge gets a child of it ({@link #forkContext}), so that two exchanges never write
 * one context at once. The exchange's own runtime stays unused during the race (the client
 * releases it at the end, which is then nothing), and serves a retry after it.
 *
 * <p><b>The hedge.</b> After the delay the timer calls {@link #run}, which hands the hedge to the
 * hedge pool (picking may take a while, and sending may resolve a name): if the race is still
 * undecided, the budgets are asked ({@link ServiceHedging#tryWithdraw}), a target other than the
 * first's is chosen ({@link ServiceHedging#chooseHedge}) and the copy is sent.
 *
 * <p><b>Who gets the caller.</b> Exactly one copy's callbacks go on to the exchange ({@link
 * AsyncBalancedExchange#callback}, which applies the retry rules and answers the caller):
 * <ul>
 *   <li>a copy whose first signal (headers or failure) comes while no hedge is in flight: the race
 *       is then over before it began, and no hedge is sent from then on;
 *   <li>else the first copy with usable response headers (not a failure status) wins: the other is
 *       settled as superseded (neither a failure nor a success; its slot held while its server
 *       presumably still works on it, {@link ServiceHedging#hold}), cancelled, and its connection
 *       closed;
 *   <li>else, when both copies failed (a failure status or an exception), the last to fail: the
 *       first failure reached passive health at once, its body was discarded, and its exception (if
 *       any) travels as a suppressed one.
 * </ul>
 * A copy cancelled by the caller (the future's cancel) is released, never charged.
 *
 * <p>Thread-safe: the copies' callbacks come on the I/O reactor's threads, the hedge is sent from
 * the hedge pool, and the caller may cancel on its own; the decisions are made under this race's
 * monitor, and nothing is called out of it under the monitor.
 */
final class AsyncHedgeRace extends HedgeTrigger<AsyncHedgeRace.Leg> implements Cancellable {
  private static final System.Logger LOG = System.getLogger(FairwayHttpClient5.class.getName());

  private final AsyncBalancedExchange exchange;
  private final ServiceHedging hedging;
  /** Cancelled by the caller's future, which it registers with; each copy's cancellation hangs under it. */
  private final AttemptCancellation cancellation;
  private final Leg first;
  private volatile @Nullable Leg second; // set once, under the monitor, as the hedge is sent

  // Guarded by this.
  private boolean disarmed; // the timer was told once that the race needs it no more

  AsyncHedgeRace(AsyncBalancedExchange exchange, ServiceHedging hedging, Attempt first) {
    this.exchange = exchange;
    this.hedging = hedging;
    this.cancellation = new AttemptCancellation(exchange.scope().cancellableDependency);
    this.first = new Leg(first, exchange.scope().clientContext);
  }

  /** Arms the hedge timer and sends the first copy. */
  void start(long delayNanos) {
    cancellation.setDependency(this); // the caller's cancel also closes the copies' connections
    arm(delayNanos); // before the send: a copy that ends at once disarms after this
    first.send();
  }

  /**
   * A child of the caller's context for the hedge: the caller's attributes are read through it,
   * and its configuration (request config, cookie store and specs, credentials, auth cache and
   * schemes, user token) is copied, while what an exchange records (its route, request, response,
   * endpoint details, auth exchanges) goes to the child. HttpClient's context is not meant for two
   * exchanges at once.
   */
  static HttpClientContext forkContext(HttpClientContext callers) {
    HttpClientContext child = new HttpClientContext(callers);
    child.setRequestConfig(callers.getRequestConfig());
    child.setCookieStore(callers.getCookieStore());
    child.setCookieSpecRegistry(callers.getCookieSpecRegistry());
    child.setCredentialsProvider(callers.getCredentialsProvider());
    child.setAuthCache(callers.getAuthCache());
    child.setAuthSchemeRegistry(callers.getAuthSchemeRegistry());
    child.setUserToken(callers.getUserToken());
    child.setExchangeId(callers.getExchangeId());
    return child;
  }

  // ---- the hedge

  // ---- the hedge (HedgeTrigger sends it; these are its questions)

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
    Attempt attempt = exchange.attempt(pick);
    exchange.hedgeSent(first.attempt.target(), attempt.target());
    Leg leg = new Leg(attempt, forkContext(exchange.scope().clientContext));
    second = leg;
    return leg;
  }

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

  /**
   * The caller cancelled (its future's cancel reached the race's cancellation, which also cancels
   * both copies' exchanges): no hedge from now on, and both copies' connections are closed, so that
   * an exchange whose cancel HttpClient cannot deliver (hard cancellation off) ends too.
   */
  @Override
  public boolean cancel() {
    closeHedge();
    boolean disarm;
    synchronized (this) {
      disarm = disarmOnce();
    }
    if (disarm) {
      hedging.scheduler.disarm(this); // out of the timer's queue within a tick, not at its deadline
    }
    first.runtime.discardEndpoint();
    Leg s = second;
    if (s != null) {
      s.runtime.discardEndpoint();
    }
    return true;
  }

  // ---- the copies

  /** What the race does with one signal of a copy. */
  private enum Route {
    /** The copy's outcome is the exchange's: to its callbacks. */
    FORWARD,
    /** The copy won at its headers: the other is settled and cancelled, then as {@link #FORWARD}. */
    WIN,
    /** The copy failed while the other may still win: settled here, kept out of the exchange. */
    FAILED_EARLY,
    /** The race settled the copy already (it lost): its signals only end it. */
    LOST
  }

  /**
   * One copy of the request: its attempt, runtime, cancellation and context, and the exchange's
   * callbacks for its attempt, which get its signals once the race hands the copy on.
   */
  final class Leg implements AsyncExecCallback {
    final Attempt attempt;
    final AsyncExecRuntime runtime;
    final AttemptCancellation legCancellation;
    final HttpClientContext context;
    final AsyncExecCallback exchangeCallback;
    // Guarded by the race's monitor.
    private boolean forwarded; // its signals go to the exchange
    private boolean failed; // a failure status or an exception came while the other could still win
    private boolean lost; // settled by the race: signals from now on only end it
    private @Nullable IOException failure; // its exception, if it failed early with one

    Leg(Attempt attempt, HttpClientContext context) {
      this.attempt = attempt;
      this.runtime = exchange.scope().execRuntime.fork();
      this.legCancellation = new AttemptCancellation(cancellation);
      this.context = context;
      this.exchangeCallback = exchange.callback(attempt);
    }

    void send() {
      exchange.proceed(attempt, legCancellation, context, runtime, this);
    }

    /** The race decided against this copy: its exchange is cancelled and its connection closed. */
    void abort() {
      legCancellation.cancel();
      runtime.discardEndpoint();
    }

    @Override
    public @Nullable AsyncDataConsumer handleResponse(HttpResponse response, @Nullable EntityDetails entityDetails)
        throws HttpException, IOException {
      int code = response.getCode();
      boolean usable = !exchange.route().outcomes.isFailureStatus(code);
      Route route;
      Leg other = null;
      boolean disarm = false;
      boolean otherFailedStatus = false;
      synchronized (AsyncHedgeRace.this) {
        if (lost) {
          route = Route.LOST;
        } else if (forwarded) { // not twice: headers come once; kept for a chain that misbehaves
          route = Route.FORWARD;
        } else if (!hedgeSent()) { // no hedge in flight, and none from now on: this copy alone
          closeHedge();
          forwarded = true;
          disarm = disarmOnce();
          route = Route.FORWARD;
        } else {
          other = this == first ? second : first;
          if (usable) {
            forwarded = true;
            disarm = disarmOnce();
            route = Route.WIN;
            if (other != null && !other.lost && !other.forwarded) {
              otherFailedStatus = other.failed && other.failure == null;
              if (other.failed && other.failure != null) {
                other = null; // ended with its exception already, and settled then
              } else {
                other.lost = true;
              }
            } else {
              other = null;
            }
          } else if (other != null && other.failed) { // both failed: the last to fail is the caller's
            forwarded = true;
            disarm = disarmOnce();
            route = Route.FORWARD;
            other = null;
          } else {
            failed = true;
            route = Route.FAILED_EARLY;
            other = null;
          }
        }
      }
      if (disarm) {
        hedging.scheduler.disarm(AsyncHedgeRace.this);
      }
      if (route == Route.LOST) {
        return new DiscardingEntityConsumer<>(); // settled as superseded when it lost
      }
      if (route == Route.FAILED_EARLY) {
        Header report = response.getFirstHeader(LoadReportHeader.NAME);
        attempt.responded(code, report == null ? null : report.getValue());
        return new DiscardingEntityConsumer<>(); // its attempt completes as a failure at its end
      }
      if (route == Route.WIN) {
        if (other != null) {
          settleLoser(other, otherFailedStatus);
        }
        if (this != first) {
          hedging.won();
        }
      }
      if (usable) {
        hedging.recordResponse(attempt.target(), attempt.sentNanos());
      }
      return exchangeCallback.handleResponse(response, entityDetails);
    }

    @Override
    public void handleInformationResponse(HttpResponse response) throws HttpException, IOException {
      boolean forward;
      synchronized (AsyncHedgeRace.this) {
        forward = forwarded;
      }
      if (forward) {
        exchangeCallback.handleInformationResponse(response);
      }
    }

    @Override
    public void completed() {
      runtime.releaseEndpoint(); // back to the pool if its exchange left it reusable, else closed
      boolean forward;
      synchronized (AsyncHedgeRace.this) {
        forward = forwarded;
      }
      if (forward) {
        exchangeCallback.completed();
      } else {
        attempt.complete(null); // a failure status whose body was discarded; nothing if it lost
      }
    }

    @Override
    public void failed(Exception cause) {
      runtime.discardEndpoint();
      IOException io = cause instanceof IOException e ? e : new ClientProtocolException(cause.getMessage(), cause);
      Route route;
      boolean disarm = false;
      boolean failedStatus = false;
      IOException earlier = null;
      synchronized (AsyncHedgeRace.this) {
        if (forwarded) {
          route = Route.FORWARD;
        } else if (lost) {
          route = Route.LOST;
        } else if (!hedgeSent()) { // no hedge in flight, and none from now on: this copy alone
          closeHedge();
          forwarded = true;
          disarm = disarmOnce();
          route = Route.FORWARD;
        } else {
          Leg other = this == first ? second : first;
          if (other != null && other.failed) { // both failed: the last to fail is the caller's
            forwarded = true;
            disarm = disarmOnce();
            route = Route.FORWARD;
            earlier = other.failure;
          } else {
            failedStatus = failed; // its failure status came, then its discarded body failed
            failed = true;
            if (!failedStatus) {
              failure = io;
            }
            route = Route.FAILED_EARLY;
          }
        }
      }
      if (disarm) {
        hedging.scheduler.disarm(AsyncHedgeRace.this);
      }
      if (route == Route.FORWARD) {
        if (earlier != null) {
          exchange.failedBefore(earlier);
        }
        exchangeCallback.failed(cause);
      } else if (route == Route.FAILED_EARLY) {
        if (failedStatus) {
          attempt.complete(null); // the failure status it answered
        } else {
          settleFailure(attempt, io);
        }
      } // else LOST: settled already
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
   * The other copy won: {@code loser} is settled, then cancelled. A copy that had answered a
   * failure status is that status's failure; one still waiting for its answer is superseded, its
   * time so far a lower bound of its target's response time, its slot held while its server
   * presumably still works on it.
   */
  private void settleLoser(Leg loser, boolean answeredFailureStatus) {
    if (answeredFailureStatus) {
      loser.attempt.complete(null);
    } else {
      hedging.recordResponse(loser.attempt.target(), loser.attempt.sentNanos());
      loser.attempt.superseded(false); // the slot first (held or freed), then the cancel
    }
    loser.abort();
  }

  /** The hedge's target if a hedge was sent, else null; for tests. */
  @Nullable Target hedgeTarget() {
    Leg leg = second;
    return leg == null ? null : leg.attempt.target();
  }
}
