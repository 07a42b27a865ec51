package dev.fairway.lb.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Prints a rejected {@code fairway.*} property as Boot's "APPLICATION FAILED TO START" report. */
public final class FairwayConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<FairwayConfigurationException> {
  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, FairwayConfigurationException cause) {
    return new FailureAnalysis("Invalid Fairway configuration: " + cause.getMessage(),
        "Change " + cause.property() + " to an accepted value (see the message), or remove it to take the default.",
        cause);
  }
}
