package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.internal.FailureKind;
import dev.fairway.lb.internal.Failures;
import java.io.IOException;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * One copy of a hedged call in a {@link HedgeRace}: a clone of the caller's call, the attempt that
 * holds its pick, and once it ran, what it gave. A clone, so that each copy can be cancelled without
 * the other: OkHttp lets one call have one exchange at a time, and cancelling the caller's own call
 * would fail whatever it returns. The clone carries the leg as its tag; the interceptor sees it and
 * hands the clone back to the leg ({@link #proceed}), which sends it to its target as it is.
 *
 * <p>The first leg is also the listener on the caller's call ({@link #canceled}): cancelling the
 * caller's call cancels both legs, also while the winner's body is read.
 *
 * <p>Tagging a clone allocates nothing beyond the leg: a leg is its own tag supplier ({@link
 * #invoke}), and the key is one {@code KClass} for good ({@link #TAG}).
 *
 * <p>The outcome fields are written by the thread that runs the leg before it posts the outcome to
 * the race under the race's monitor, and read by others only after that.
 */
final class RaceLeg extends EventListener implements Function0<RaceLeg> {
  /**
   * The key of the tag. OkHttp keys tags by {@code KClass}; its {@code Class} overloads convert on
   * every call, allocating a new {@code KClass} each time.
   */
  static final KClass<RaceLeg> TAG = JvmClassMappingKt.getKotlinClass(RaceLeg.class);

  private final HedgeRace race;
  final Call call;
  final Attempt attempt;
  @Nullable Response response;
  /** An {@link IOException}: the leg failed; anything else is a bug, not the target's fault. */
  @Nullable Throwable thrown;

  private RaceLeg(HedgeRace race, Call call, Attempt attempt) {
    this.race = race;
    this.call = call;
    this.attempt = attempt;
  }

  /** A leg of {@code race} for {@code attempt}: a tagged clone of {@code callersCall}. */
  static RaceLeg of(HedgeRace race, Call callersCall, Attempt attempt) {
    Call clone = callersCall.clone();
    RaceLeg leg = new RaceLeg(race, clone, attempt);
    clone.tag(TAG, leg);
    return leg;
  }

  /** The tag's value, for {@code Call.tag(KClass, Function0)}: the leg itself. */
  @Override
  public RaceLeg invoke() {
    return this;
  }

  /** This leg's copy, back in the interceptor: sent to the leg's target. */
  Response proceed(Interceptor.Chain chain) throws IOException {
    return race.proceed(this, chain);
  }

  /** The caller's call was cancelled: so are both legs. */
  @Override
  public void canceled(Call cancelled) {
    race.cancelLegs();
  }

  /**
   * Runs this copy on the current thread and keeps what it gave. A usable response's time teaches
   * the delay. A checked exception Java cannot see (OkHttp 5's connect step throws {@code
   * InterruptedException}) is kept as it is, for the race to judge.
   */
  void execute() {
    try {
      Response r = call.execute();
      response = r;
      if (usable()) {
        race.hedging().recordResponse(attempt.target(), attempt.sentNanos());
      }
    } catch (Exception | Error e) { // an IOException, a bug, or a checked exception Kotlin let through
      thrown = e;
    }
  }

  /** True for a response the caller may take: one whose status is no failure. */
  boolean usable() {
    Response r = response;
    return r != null && !race.owner.isFailure(r.code());
  }

  /** The failure this leg ended with, or null (a response, or a bug). */
  @Nullable IOException failure() {
    return thrown instanceof IOException e ? e : null;
  }

  /**
   * Completes a leg whose outcome the caller does not get: a usable response is closed and its pick
   * released; a failure status or an I/O error is that target's failure, unless the race had
   * cancelled the leg before its outcome came ({@code cancelledByRace}) and the failure is one a
   * cancel causes (then released, and its running time counted as a response time, as Finagle
   * counts a superseded request). A refused connection, a rejected certificate or a timeout is
   * never a cancel's doing: a leg that failed so just before it was cancelled is a failure for
   * passive health, and its short time stays out of the latency window. Once the caller's call is
   * cancelled (cancelled or interrupted), every leg is only released.
   */
  void settle(boolean cancelledByRace) {
    Response r = response;
    Call callers = race.owner.call();
    if (callers.isCanceled()) { // the caller stopped waiting: released, nothing learnt
      if (r != null) {
        r.close();
      }
      attempt.complete(null); // released: the call is cancelled
      return;
    }
    if (r != null) {
      if (usable()) {
        attempt.superseded(true); // its server answered: the slot is free
      } else {
        attempt.responded(r.code(), FirstHeader.value(r.headers(), LoadReportHeader.NAME));
        attempt.complete(null);
      }
      r.close();
      return;
    }
    IOException failure = failure();
    if (failure == null) { // a bug in a later interceptor
      attempt.abandon();
    } else if (cancelledByRace && !callers.isCanceled() && !failedOnItsOwn(failure)) {
      race.hedging().recordResponse(attempt.target(), attempt.sentNanos()); // cancelled because the other leg won: its response time is at least this
      attempt.superseded(false); // its server most likely still works on it: held (HeldLosers)
    } else {
      attempt.complete(failure);
    }
  }

  /** True for a failure a cancel cannot cause: the target's own, even if the leg was cancelled afterwards. */
  private static boolean failedOnItsOwn(IOException failure) {
    FailureKind kind = Failures.classifyTarget(failure);
    return kind == FailureKind.CONNECT || kind == FailureKind.CERTIFICATE || kind == FailureKind.TIMEOUT;
  }
}
