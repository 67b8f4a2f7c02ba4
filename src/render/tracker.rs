//! How a stage of the render reports what it wrote, with field provenance on: the
//! [`Tracker`] each stage is given (the only caller of `render/provenance.rs`'s record
//! functions), the listener a transformer tells its unchanged writes to, and the [`Pass`] the
//! stages of one kustomization share. The table of stages and the loop that runs them are
//! `render/driver.rs`.

use crate::kustomization::Loaded;
use crate::resource::Resource;
use crate::resource::provenance::{Place, Source, Step};
use crate::transform::Unchanged;
use crate::transform::fieldspec::PathStep;
use crate::yaml::Node;
use crate::yaml::path::PathSeg;

use super::patches::Patch;
use super::writes::{Told, steps_to_path};
use super::{Chain, provenance};

/// Where a step set the field at a path of an object, given the value it held before, and
/// what else it read ([`Source`]).
type Locate<'t> =
    Box<dyn Fn(&Resource, &[PathSeg], Option<&Node>) -> (Option<Place>, Option<Box<Source>>) + 't>;

/// How a stage reports its writes, with field provenance on (the render has none without
/// it): the step kind it records under, where it set what it changed ([`Tracker::set`]) and
/// what it wrote unchanged ([`Tracker::wrote`]). The driver records the changes when the
/// stage ends; a stage of several steps (each patch, each replacement, each chart: kustomize
/// runs each as its own transformer) commits after each ([`Tracker::commit`]). Only the
/// tracker calls `render/provenance.rs`'s record functions.
pub(super) struct Tracker<'t> {
    step: Step,
    locate: Option<Locate<'t>>,
}

impl<'t> Tracker<'t> {
    pub(super) fn new(step: Step) -> Self {
        Tracker { step, locate: None }
    }

    /// The step kind what follows is recorded under (a stage whose field names one of two:
    /// `namePrefix` or `nameSuffix`, or of several steps: generators, then a chart).
    pub(super) fn step(&mut self, step: Step) {
        self.step = step;
    }

    /// The stage changed objects: every changed field's place is `locate`'s.
    pub(super) fn set(
        &mut self,
        locate: impl Fn(&Resource, &[PathSeg], Option<&Node>) -> Option<Place> + 't,
    ) {
        self.locate = Some(Box::new(move |r, p, b| (locate(r, p, b), None)));
    }

    /// [`Tracker::set`], for a step whose origins also name what it read.
    pub(super) fn set_sourced(
        &mut self,
        locate: impl Fn(&Resource, &[PathSeg], Option<&Node>) -> (Option<Place>, Option<Box<Source>>)
        + 't,
    ) {
        self.locate = Some(Box::new(locate));
    }

    /// Records what was reported so far over `acc`, then what the stage wrote with the value
    /// a field held (`wrote`: `render/writes.rs`), which is recorded after what it changed.
    pub(super) fn wrote(&mut self, acc: &mut [Resource], wrote: impl FnOnce(&mut [Resource])) {
        self.commit(acc);
        wrote(acc);
    }

    /// Records now over `acc` what the step changed, placed by `locate`: for a locator that
    /// borrows what the stage holds only while it runs.
    pub(super) fn changed(
        &mut self,
        acc: &mut [Resource],
        locate: provenance::SourcedLocateFn<'_>,
    ) {
        self.commit(acc);
        provenance::record_sourced(acc, self.step, locate);
    }

    /// Records what was reported since the last commit over `acc`.
    pub(super) fn commit(&mut self, acc: &mut [Resource]) {
        if let Some(locate) = self.locate.take() {
            provenance::record_sourced(acc, self.step, &*locate);
        }
    }

    /// Takes the objects' current values as recorded, with no new origin: a change of how a
    /// value is written, not of what it is (annotations made strings at the root).
    pub(super) fn refresh(&mut self, acc: &mut [Resource]) {
        self.commit(acc);
        provenance::refresh(acc);
    }

    /// Records one patch that ran over `acc` (`render/writes.rs`, [`super::writes::record_patch`]:
    /// its moved list items lined up, then what it changed and wrote).
    pub(super) fn patch(
        &mut self,
        acc: &mut [Resource],
        p: &Patch,
        to: &super::writes::Tracked<'_>,
        sources: &super::writes::CopySources,
    ) {
        super::writes::record_patch(acc, p, to, sources);
    }
}

/// Runs a transformer with a listener for the writes it makes with the value a field held
/// (`transform::Unchanged`) when `tracked`, and gives what it was told with its result.
pub(super) fn listening<T>(tracked: bool, run: impl FnOnce(Unchanged<'_>) -> T) -> (T, Told) {
    let mut told = Told::new();
    let mut tell = |i: usize, at: &[PathStep<'_>]| told.push((i, steps_to_path(at)));
    let out = run(if tracked { Some(&mut tell) } else { None });
    (out, told)
}

/// One kustomization being built: what it says, where it sits in the chain, what it has
/// accumulated so far, and what one stage leaves for a later one.
pub(super) struct Pass<'p, 'c> {
    pub(super) loaded: &'p Loaded,
    pub(super) chain: &'p Chain<'c>,
    pub(super) acc: Vec<Resource>,
    /// `patchesJson6902`, loaded with the other patches and run after the annotations.
    pub(super) json6902: Vec<Patch>,
}
