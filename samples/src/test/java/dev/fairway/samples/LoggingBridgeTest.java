package dev.fairway.samples;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import java.net.ConnectException;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What docs/operations.md promises: with {@code org.slf4j:slf4j-jdk-platform-logging} on the classpath,
 * Fairway's {@code System.Logger} lines arrive in SLF4J (here Logback) under the class's name.
 * Runs in its own surefire JVM (the "logging-bridge" execution in this module's pom): the JDK picks
 * its LoggerFinder once per JVM, and the other tests keep java.util.logging.
 */
@Tag("logging-bridge")
class LoggingBridgeTest {

  @Test
  void connectFailure_ejectionLineReachesLogbackThroughTheBridge() throws Exception {
    // Without the bridge the JDK's own finder (java.util.logging) would be here and nothing below arrives.
    assertThat(System.LoggerFinder.getLoggerFinder().getClass().getName())
        .isEqualTo("org.slf4j.jdk.platform.logging.SLF4JSystemLoggerFinder");
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    ch.qos.logback.classic.Logger logger = context.getLogger(LoadBalancer.class.getName());
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.setContext(context);
    appender.start();
    logger.addAppender(appender);
    try (LoadBalancer lb = LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", 8081), Target.of("127.0.0.1", 8082))
        .strategy(Strategy.roundRobin())
        .build()) {
      Pick pick = lb.pick();
      Target refused = pick.target();
      pick.failure(new ConnectException("Connection refused"));

      List<ILoggingEvent> ejections = appender.list.stream()
          .filter(e -> e.getFormattedMessage().contains("eject"))
          .toList();
      assertThat(ejections).hasSize(1);
      ILoggingEvent line = ejections.get(0);
      assertThat(line.getLoggerName()).isEqualTo("dev.fairway.lb.LoadBalancer");
      assertThat(line.getLevel()).isEqualTo(Level.INFO);
      // The bridge fills in System.Logger's {0}-style parameters: the service and the target's id.
      assertThat(line.getFormattedMessage()).startsWith("orders: ejected " + refused.id() + " for ");
    } finally {
      logger.detachAppender(appender);
    }
  }
}
