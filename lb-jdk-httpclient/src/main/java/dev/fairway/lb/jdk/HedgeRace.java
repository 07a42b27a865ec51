package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import dev.fairway.lb.internal.hedging.HedgeTrigger;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.net.http.HttpResponse.ResponseInfo;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The first attempt of a hedgeable call, raced against at most one hedge, on the JDK's async
 * exchanges: the race's state and nothing else. The decisions are lb-core's {@link ServiceHedging}
 * (the delay, the hedge's target, both budgets, what outcomes teach, held losers), the same as
 * lb-okhttp's; the race is a {@link HedgeTrigger} (a timer node, so that arming its hedge
 * allocates nothing), which sends the hedge as every client's race does.
 *
 * <p>The first leg is sent by the call ({@link #start}). After the delay the hedge pool picks a
 * target other than the first's ({@link ServiceHedging#chooseHedge}), takes a token from each
 * budget, and this race sends the hedge with {@code sendAsync} ({@link #sendHedge}). The winner is decided when a leg's response headers arrive ({@link Leg#apply}): the
 * first <em>usable</em> response (not a failure status) wins, and only the winner's body goes to
 * the caller's handler, so the handler never sees two responses. The other leg is settled first
 * (superseded: neither a failure nor a success; its slot held while its server presumably still
 * works on it, {@link ServiceHedging#hold}) and only then cancelled with {@link
 * CompletableFuture#cancel}: the JDK may run a cancelled exchange's callbacks late, and the slot
 * must not wait for them.
 *
 * <p>A leg that fails or answers a failure status (whose body is read into memory, as for a
 * retry) does not end the race while the other leg may still answer: if the other wins, this one's
 * failure reaches passive health; if both fail, the call's loop gets the first leg's outcome (a
 * response before an exception) and applies its retry rules, the hedge counted as an attempt on a
 * target this call tried. The caller's cancel (or an interrupted {@code send}) cancels both legs,
 * each released, none charged.
 *
 * <p>Every leg is settled exactly once: by {@link Attempt}'s first-completion-wins rule, and by the
 * {@code lost} mark, set under this race's monitor, that tells a leg's late outcome it was settled
 * already. The timer is disarmed once, when the race is decided.
 */
final class HedgeRace<T> extends HedgeTrigger<HedgeRace<T>.Leg> {
  private static final System.Logger LOG = System.getLogger(FairwayHttpClient.class.getName());

  private final BalancedExchange<T> exchange;
  private final ServiceHedging hedging;
  private final BodyHandler<T> handler;
  private final CompletableFuture<HttpResponse<T>> result;
  private final Leg first;
  private volatile @Nullable Leg second; // set once, under the monitor, as the hedge is sent

  // Guarded by this.
  private @Nullable Leg winner; // the leg whose usable headers came first
  private boolean finished; // decided: the call's loop has (or will have) its outcome, the timer is disarmed

  HedgeRace(BalancedExchange<T> exchange, ServiceHedging hedging, Attempt first, BodyHandler<T> handler,
      CompletableFuture<HttpResponse<T>> result) {
    this.exchange = exchange;
    this.hedging = hedging;
    this.handler = handler;
    this.result = result;
    this.first = new Leg(first);
  }

  /** Arms the hedge timer and sends the first leg. */
  void start(long delayNanos) {
    arm(delayNanos); // before the send: a leg that ends at once disarms after this
    send(first);
  }

  /** One copy of the call: its attempt, its exchange, what it gave. Its own body handler. */
  final class Leg implements BodyHandler<T> {
    final Attempt attempt;
    private volatile @Nullable CompletableFuture<HttpResponse<T>> future;
    private volatile boolean cancelRequested;
    // Guarded by the race's monitor.
    private boolean posted; // its outcome is in
    private boolean headers; // its response headers came
    private boolean lost; // settled by the race (superseded, failed or cancelled): a later outcome only ends
    private @Nullable HttpResponse<T> response;
    private @Nullable Throwable thrown;

    Leg(Attempt attempt) {
      this.attempt = attempt;
    }

    @Override
    public BodySubscriber<T> apply(ResponseInfo info) {
      return headers(this, info);
    }

    /** True for a response the caller may take: one read by the caller's handler, not kept as a failure. */
    private boolean usable() {
      return response != null && attempt.retainedBody == null;
    }
  }

  // ---- sending

  @SuppressWarnings("FutureReturnValueIgnored") // the dependent stage only posts; the race settles every outcome
  private void send(Leg leg) {
    CompletableFuture<HttpResponse<T>> f;
    try {
      f = exchange.sendLeg(leg.attempt, leg);
    } catch (IOException | RuntimeException | Error e) { // an unaddressable target, or a bug
      posted(leg, null, e);
      return;
    }
    leg.future = f;
    if (leg.cancelRequested) { // cancelled while it was being sent: the canceller may have missed the future
      f.cancel(true);
    }
    f.whenComplete((r, t) -> posted(leg, r, t));
  }

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
    return exchange.affinityKey;
  }

  @Override
  protected Target firstTarget() {
    return first.attempt.target();
  }

  @Override
  protected boolean callerStopped() {
    return exchange.isCancelled();
  }

  @Override
  protected Leg hedgeCopy(Pick pick) {
    Leg leg = new Leg(exchange.hedgeAttempt(pick));
    second = leg;
    return leg;
  }

  @Override
  protected void sendHedge(Leg leg) {
    send(leg);
    if (exchange.isCancelled()) { // the caller cancelled while the hedge was sent: cancelAll may have missed it
      leg.attempt.cancel();
      cancelFuture(leg);
    }
  }

  // ---- the decision

  /**
   * {@code leg}'s response headers: the first usable one wins (the caller's handler gets its body,
   * the other leg is settled and cancelled); a failure status's body is kept in memory, for the
   * call's loop should the other leg fail too; a leg decided against gets its body discarded.
   */
  private BodySubscriber<T> headers(Leg leg, ResponseInfo info) {
    int status = info.statusCode();
    boolean keep = exchange.route.outcomes.isFailureStatus(status)
        && info.headers().firstValueAsLong("content-length").orElse(0) <= AttemptHandler.MAX_RETAINED_BODY;
    String loadReport = info.headers().firstValue(LoadReportHeader.NAME).orElse(null);
    Leg other;
    boolean otherAnswered;
    boolean otherFailed;
    synchronized (this) {
      if (leg.lost || finished || winner != null) {
        return BodySubscribers.replacing(null); // decided against: settled already
      }
      leg.headers = true;
      if (keep) {
        other = null;
        otherAnswered = false;
        otherFailed = false;
      } else {
        winner = leg;
        closeHedge(); // no hedge after a winner
        other = leg == first ? second : first;
        otherAnswered = other != null && other.headers;
        otherFailed = other != null && other.posted;
        if (other != null) {
          other.lost = true;
        }
      }
    }
    leg.attempt.responded(status, loadReport);
    if (keep) {
      return BodySubscribers.mapping(BodySubscribers.ofByteArray(), body -> retain(leg, body));
    }
    if (other != null) {
      if (otherFailed) {
        settleFailed(other); // it failed before this won: its failure reaches passive health
      } else {
        if (!otherAnswered) {
          hedging.recordResponse(other.attempt.target(), other.attempt.sentNanos()); // its response time is at least this
        }
        other.attempt.superseded(otherAnswered); // the slot first (held or freed), then the cancel
        cancelFuture(other);
      }
    }
    BodySubscriber<T> subscriber;
    try {
      subscriber = handler.apply(info);
    } catch (RuntimeException | Error e) {
      leg.attempt.release(); // the caller's handler threw: no fault of the target
      throw e;
    }
    return new AttemptHandler.Tracked<>(subscriber, leg.attempt);
  }

  @SuppressWarnings("NullAway") // the body of a kept response is never read: the call replays retainedBody
  private T retain(Leg leg, byte[] body) {
    leg.attempt.retainedBody = body;
    return null;
  }

  /** {@code leg}'s exchange ended: with a response, or with {@code t}. */
  private void posted(Leg leg, @Nullable HttpResponse<T> r, @Nullable Throwable t) {
    Leg chosen = null;
    Leg settle = null;
    boolean disarm = false;
    synchronized (this) {
      leg.posted = true;
      leg.response = r;
      leg.thrown = t == null ? null : BalancedExchange.unwrap(t);
      if (leg.lost || finished) {
        return; // settled by the race already
      }
      Leg other = leg == first ? second : first;
      if (leg == winner || (leg.usable() && winner == null)) {
        chosen = leg;
      } else if (other == null) { // no hedge sent: none will be now, and the loop takes this outcome
        closeHedge();
        chosen = leg;
      } else if (other.posted) { // both failed: a response is worth more to the caller than an exception
        Leg hedgeLeg = leg == first ? other : leg;
        chosen = first.response != null || hedgeLeg.response == null ? first : hedgeLeg;
        settle = chosen == first ? hedgeLeg : first;
        settle.lost = true;
      } else {
        return; // the other leg may still answer
      }
      finished = true;
      disarm = true;
    }
    if (disarm) {
      hedging.scheduler.disarm(this);
    }
    if (settle != null) {
      settleFailed(settle);
    }
    Leg hedgeLeg = second;
    exchange.raceEnded(hedgeLeg == null ? null : hedgeLeg.attempt.target());
    if (chosen == hedgeLeg && chosen.usable()) {
      hedging.won();
    }
    exchange.attemptEnded(chosen.attempt, chosen.response, chosen.thrown, result);
  }

  /** Completes a leg whose failure (an exception or a failure status) the caller does not get. */
  private void settleFailed(Leg leg) {
    if (leg.response != null) {
      leg.attempt.complete(null); // its failure status
    } else if (leg.thrown instanceof IOException e) {
      leg.attempt.complete(e);
    } else {
      leg.attempt.release(); // a bug, not the target's fault
    }
  }

  /**
   * The caller cancelled (or its {@code send} was interrupted): both legs are released, neither
   * charged, and cancelled; no hedge is sent from now on.
   */
  void cancelAll() {
    boolean disarm;
    Leg s;
    synchronized (this) {
      closeHedge();
      disarm = !finished;
      finished = true;
      first.lost = true;
      s = second;
      if (s != null) {
        s.lost = true;
      }
    }
    if (disarm) {
      hedging.scheduler.disarm(this);
    }
    first.attempt.cancel();
    cancelFuture(first);
    if (s != null) {
      s.attempt.cancel();
      cancelFuture(s);
    }
  }

  private void cancelFuture(Leg leg) {
    leg.cancelRequested = true;
    CompletableFuture<HttpResponse<T>> f = leg.future;
    if (f != null) {
      f.cancel(true); // the JDK aborts the exchange: see FairwayHttpClient on cancellation
    }
  }

  /** True once the first leg's exchange ended (its outcome may still wait for the hedge); for tests. */
  synchronized boolean firstPosted() {
    return first.posted;
  }

  /** The hedge's target if a hedge was sent, else null; for tests. */
  @Nullable Target hedgeTarget() {
    Leg leg = second;
    return leg == null ? null : leg.attempt.target();
  }
}
