/**
 * JMH benchmarks of Fairway's pick path and of peer load balancers measured in the same run. Not an
 * API: run them with {@code java -jar benchmarks/target/benchmarks.jar} (see benchmarks/README.md).
 */
package dev.fairway.benchmarks;
