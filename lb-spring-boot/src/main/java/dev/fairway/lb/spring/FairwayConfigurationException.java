package dev.fairway.lb.spring;

/**
 * A {@code fairway.*} property with a value the SDK rejects. Its message names the property and the
 * value, e.g. {@code fairway.services.orders.strategy: "fastest" (expected: one of round-robin,
 * ...)}; Boot's failure analysis ({@link FairwayConfigurationFailureAnalyzer}) prints it when startup
 * fails.
 */
public final class FairwayConfigurationException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final String property;

  FairwayConfigurationException(String property, String message) {
    super(message);
    this.property = property;
  }

  /**
   * Turns the SDK's {@code field: value (expected: ...)} message into one that names the property
   * instead of the builder's field.
   */
  static FairwayConfigurationException of(String property, IllegalArgumentException e) {
    String message = String.valueOf(e.getMessage());
    int colon = message.indexOf(": ");
    String detail = colon >= 0 ? message.substring(colon + 2) : message;
    return new FairwayConfigurationException(property, property + ": " + detail);
  }

  /** The property's full name, e.g. {@code fairway.services.orders.strategy}. */
  public String property() {
    return property;
  }
}
