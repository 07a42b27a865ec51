package dev.fairway.lb;

/** The base of every strategy Fairway ships: {@link Strategy}'s factories return subclasses. */
abstract class BuiltinStrategy implements Strategy {
  abstract StrategyInstance attach(BalancerContext context);

  @Override
  public String toString() {
    return name();
  }
}
