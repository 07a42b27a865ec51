package dev.fairway.lb.internal;

import dev.fairway.lb.Pick;
import org.jspecify.annotations.Nullable;

/**
 * The one rule that completes an attempt's pick, shared by every client integration's {@code
 * Attempt}: the caller's stop is never the target's failure. Not public API (see the package
 * documentation).
 */
public final class AttemptOutcome {
  private AttemptOutcome() {}

  /**
   * Completes {@code pick} and says how the attempt is timed: released ({@link
   * CallMeters.Outcome#CANCELLED}) if the caller stopped waiting ({@code callerStopped}: a cancel or
   * an abort) or {@code failure} is an interrupt ({@link Failures#isInterruption}); else a failure
   * when {@code failure} is not null, or when {@code failureStatus} is not {@link
   * OutcomeRule#SUCCESS} (a {@link FailureStatusException}); else a success.
   */
  public static CallMeters.Outcome complete(Pick pick, boolean callerStopped, @Nullable Throwable failure,
      int failureStatus) {
    if (callerStopped || (failure != null && Failures.isInterruption(failure))) {
      pick.release();
      return CallMeters.Outcome.CANCELLED;
    }
    if (failure != null) {
      pick.failure(failure);
      return CallMeters.Outcome.FAILURE;
    }
    if (failureStatus != OutcomeRule.SUCCESS) {
      pick.failure(new FailureStatusException(failureStatus, pick.target().id()));
      return CallMeters.Outcome.FAILURE;
    }
    pick.success();
    return CallMeters.Outcome.SUCCESS;
  }
}
