package dev.fairway.samples.lab;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.opentest4j.TestAbortedException;

/**
 * A program a test needs that Maven cannot fetch (Chromium for the lab report). On a developer's
 * machine without it the test is skipped with a message naming the Debian package to install, so
 * {@code mvn -B verify} passes on a fresh machine with only Java and Maven. Under CI ({@code CI=true})
 * a missing tool fails the test instead: {@code .ci/run} installs the package, so there a skip would
 * hide a broken install step.
 *
 * <p>The system property {@code fairway.tool.<command>} replaces the PATH lookup with a path of its
 * own; pointing it at a file that does not exist shows the skip (or the CI failure) without
 * uninstalling anything.
 */
final class ExternalTool {
  private ExternalTool() {}

  /** The executable {@code command}, found as described above, or a skip / failure. */
  static Path require(String command, String debianPackage) {
    try {
      return require(command, debianPackage, System.getenv(), System.getProperties());
    } catch (TestAbortedException e) {
      // Surefire's summary shows only the count of skipped tests; say which and why where a developer looks.
      System.err.println("[" + command + "] " + e.getMessage());
      throw e;
    }
  }

  static Path require(String command, String debianPackage, Map<String, String> env, Properties props) {
    String override = props.getProperty("fairway.tool." + command);
    Path found = override != null ? executableOrNull(Path.of(override)) : onPath(command, env.get("PATH"));
    if (found != null) {
      return found;
    }
    String where = override != null
        ? "-Dfairway.tool." + command + "=" + override + " is not an executable file"
        : command + " is not on the PATH (" + env.getOrDefault("PATH", "") + ")";
    String install = "apt-get install " + debianPackage;
    if (Boolean.parseBoolean(env.get("CI"))) {
      throw new AssertionError(where + "; CI=true needs it (" + install + ", as .ci/run does)");
    }
    throw new TestAbortedException(where + "; skipped: install Debian's package with `" + install + "` to run this test");
  }

  private static Path onPath(String command, String path) {
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (!dir.isEmpty()) {
        Path candidate = executableOrNull(Path.of(dir, command));
        if (candidate != null) {
          return candidate;
        }
      }
    }
    return null;
  }

  private static Path executableOrNull(Path p) {
    return Files.isRegularFile(p) && Files.isExecutable(p) ? p : null;
  }
}
