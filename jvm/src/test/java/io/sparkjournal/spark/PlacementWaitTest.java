package io.sparkjournal.spark;

import static io.sparkjournal.Expect.equal;

/**
 * {@link PlacementWait}: planning waits missingHostWait from now, or Spark's
 * registration wait from the application's start, whichever ends later (as
 * Python's discovery.survey).
 */
public final class PlacementWaitTest {

    private PlacementWaitTest() {
    }

    public static void testAYoungApplicationWaitsForItsRegistrationWait() {
        // started at 1000, registration wait 30s: at 2000 the wait runs to 31000, not 7000
        equal(31_000L, PlacementWait.deadlineMs(2_000, 5_000, 1_000, 30_000), "young");
    }

    public static void testAnOlderApplicationWaitsMissingHostWaitFromNow() {
        equal(105_000L, PlacementWait.deadlineMs(100_000, 5_000, 1_000, 30_000), "past its registration wait");
        equal(100_000L, PlacementWait.deadlineMs(100_000, 0, 1_000, 30_000), "missingHostWait 0: no wait");
        equal(33_000L, PlacementWait.deadlineMs(28_000, 5_000, 1_000, 30_000), "whichever ends later");
    }
}
